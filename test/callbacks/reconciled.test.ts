import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { answered, startTestService, type TestService } from '../support/harness.js';
import { caseStatus, createWorkflow, startCase } from '../cases/support.js';
import { sleeper } from '../support/graphs.js';
import { Receiver } from './receiver.js';
import { callbacksOf, passesByHand, pastSweepGrace, verified, webhookSecret } from './support.js';
import type { AppContext } from '../../src/context.js';
import { CaseRunReconciler } from '../../src/cases/run-reconciler.js';
import { createActivities } from '../../activities/index.js';
import { caseCallbackDelivery } from '../../src/temporal/contracts/callback-delivery.js';
import { outcomeOnly } from '../../src/domain/cases.js';
import { createRepositories } from '../../src/store/repositories.js';
import { TemporalCallbackDeliveries } from '../../src/temporal/gateways/callback-deliveries.js';
import { TemporalCaseRuns } from '../../src/temporal/gateways/case-runs.js';

/** What a test puts in place of the service's own parts of a reconciler (the rest: the service's store and engine). */
type ReconcilerParts = Pick<ConstructorParameters<typeof CaseRunReconciler>[0], 'cases' | 'callbacks' | 'events'>;

function reconcilerOf(context: AppContext, parts: ReconcilerParts): CaseRunReconciler {
  const repos = createRepositories(context.store.db);
  return new CaseRunReconciler({
    repo: repos.cases,
    runs: new TemporalCaseRuns(context.temporal, new Registry(), context.config.temporal.caseWorkflowTaskTimeoutMs),
    deliveries: repos.callbacks,
    logger: context.logger,
    childStartGraceMs: 0,
    ...parts,
  });
}

describe('a case the reconciler closes', () => {
  let svc: TestService;
  const callback = new Receiver();
  const subscriber = new Receiver();
  /** Told of every case.failed in the workspace, by each test. */
  let subscriptionSecret: string;

  /**
   * The case's FAILED end reached its callbackUrl and the subscriber, each once and signed, and the callback is in
   * its delivery log, delivered at its first attempt; the callback's body.
   */
  async function deliveredOnce(caseId: string, workflowId: string): Promise<Record<string, unknown>> {
    await expect.poll(() => callback.received.length, { timeout: 15_000 }).toBe(1);
    await expect.poll(() => subscriber.received.length, { timeout: 15_000 }).toBe(1);
    const body = verified(await webhookSecret(svc), callback.received[0]!);
    expect(body).toMatchObject({ caseId, status: 'FAILED', results: {} });
    expect(verified(subscriptionSecret, subscriber.received[0]!)).toMatchObject({
      type: 'case.failed',
      data: { caseId, workspaceId: svc.workspaceId, workflowId, status: 'FAILED' },
    });
    await expect
      .poll(async () => (await callbacksOf(svc, caseId)).deliveries, { timeout: 10_000 })
      .toEqual([
        expect.objectContaining({
          status: 'delivered',
          workflowId: `callback-${caseId}`,
          attempts: [expect.objectContaining({ attempt: 1, responseStatus: 200 })],
        }),
      ]);
    return body;
  }

  beforeAll(async () => {
    svc = await startTestService({ config: passesByHand });
    await callback.listen();
    await subscriber.listen();
    const subscription = await answered(
      svc.client.POST('/api/v1/subscriptions', {
        body: { workspaceId: svc.workspaceId, url: subscriber.url, eventTypes: ['case.failed'] },
      }),
      201,
    );
    subscriptionSecret = subscription.secret;
  });
  afterAll(async () => {
    await Promise.all([callback.close(), subscriber.close()]);
    await svc?.stop();
  });

  it('calls back its callbackUrl and tells its subscribers, once, though two passes close it at the same moment', async () => {
    const wf = await createWorkflow(svc, sleeper(20));
    const caseId = await startCase(svc, wf.workflowId, { text: 'x' }, { callbackUrl: callback.url });
    // Closed behind the service: the run never records its end, nor calls back.
    await svc.service.context.temporal.client.workflow
      .getHandle(`case-${caseId}`)
      .terminate('test: closed behind the service');

    const { caseReconciler } = svc.service.context.services;
    const closed = await Promise.all([caseReconciler.reconcile(), caseReconciler.reconcile()]);
    expect(closed.reduce((a, b) => a + b)).toBe(1);
    expect((await caseStatus(svc, caseId)).status).toBe('FAILED');

    const body = await deliveredOnce(caseId, wf.workflowId);
    expect(JSON.stringify(body.error)).toContain('terminated');

    // A later pass finds nothing to close, and nothing more arrives.
    expect(await caseReconciler.reconcile()).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(callback.received).toHaveLength(1);
    expect(subscriber.received).toHaveLength(1);
  }, 60_000);

  it('starts the deliveries Temporal refused after the end at a later pass, the case being closed already', async () => {
    callback.received.length = 0;
    subscriber.received.length = 0;
    const wf = await createWorkflow(svc, sleeper(20));
    const caseId = await startCase(svc, wf.workflowId, { text: 'y' }, { callbackUrl: callback.url });
    const { context } = svc.service;
    await context.temporal.client.workflow.getHandle(`case-${caseId}`).terminate('test: closed behind the service');

    // Temporal refuses the callback's start once, and the subscribers' dispatch throws after the end's commit.
    const real = new TemporalCallbackDeliveries(context.temporal);
    let refusals = 1;
    const { cases, subscriptions } = context.services;
    let failDispatch = true;
    const reconciler = reconcilerOf(context, {
      cases: {
        finalize: async (...args) => {
          const finished = await cases.finalize(...args);
          if (failDispatch) throw new Error('test: the engine refused the dispatch');
          return finished;
        },
      },
      callbacks: {
        start: (...args) => (refusals-- > 0 ? Promise.reject(new Error('test: refused')) : real.start(...args)),
      },
      events: subscriptions,
    });
    await reconciler.reconcile();
    expect((await caseStatus(svc, caseId)).status).toBe('FAILED');
    failDispatch = false;
    // This pass finds no RUNNING case; what the end owes starts: the callback once refused, then started.
    expect(await reconciler.reconcile()).toBe(0);
    expect(await reconciler.reconcile()).toBe(0);
    await expect.poll(() => callback.received.length, { timeout: 15_000 }).toBe(1);
    await expect.poll(() => subscriber.received.length, { timeout: 15_000 }).toBe(1);
    expect(verified(await webhookSecret(svc), callback.received[0]!)).toMatchObject({ caseId, status: 'FAILED' });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(callback.received).toHaveLength(1);
    expect(subscriber.received).toHaveLength(1);
  }, 60_000);

  it("a terminated run's late end sends no second, contradicting callback once the reconciler recorded the case", async () => {
    callback.received.length = 0;
    const wf = await createWorkflow(svc, sleeper(20));
    const caseId = await startCase(svc, wf.workflowId, { text: 'z' }, { callbackUrl: callback.url });
    const { context } = svc.service;
    await context.temporal.client.workflow.getHandle(`case-${caseId}`).terminate('test: closed behind the service');
    expect(await context.services.caseReconciler.reconcile()).toBe(1);
    await expect.poll(() => callback.received.length, { timeout: 15_000 }).toBe(1);

    // The run's end local activity, still running in the worker when the run was terminated, ends now.
    const activities = createActivities(context);
    const progress = outcomeOnly(caseId, 'COMPLETED', { results: {} });
    const late = caseCallbackDelivery(
      { caseId, workspaceId: svc.workspaceId, callbackUrl: callback.url },
      'COMPLETED',
      progress,
    );
    const ended = await activities.endCase({
      finalize: { caseId, workspaceId: svc.workspaceId, status: 'COMPLETED', runId: '', progress },
      callback: { ...late, workflowId: `case-${caseId}` },
    });
    // No attempt: the store's end, which the run (revision 12 on) takes as its own.
    expect(ended).toEqual({ store: expect.objectContaining({ status: 'FAILED' }) as unknown });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(callback.received).toHaveLength(1);
    expect(verified(await webhookSecret(svc), callback.received[0]!)).toMatchObject({ caseId, status: 'FAILED' });
    expect((await caseStatus(svc, caseId)).status).toBe('FAILED');
  }, 60_000);

  it('leaves its deliveries to the sweep when the process dies between the end and their start', async () => {
    callback.received.length = 0;
    subscriber.received.length = 0;
    const wf = await createWorkflow(svc, sleeper(20));
    const caseId = await startCase(svc, wf.workflowId, { text: 'x' }, { callbackUrl: callback.url });
    const { context } = svc.service;
    await context.temporal.client.workflow.getHandle(`case-${caseId}`).terminate('test: closed behind the service');

    // A reconciling process commits the end as CaseService.finalize does (the case, its callback's and its
    // subscribers' deliveries in one transaction), and dies before it starts any of them.
    const repos = createRepositories(context.store.db);
    const { subscriptions } = context.services;
    const killed = new Error('test: the process was killed after the commit');
    const dying = reconcilerOf(context, {
      cases: {
        finalize: async (input, delivery) => {
          const subscribers = await subscriptions.subscribersOf(svc.workspaceId, input.status);
          await repos.cases.finalize(
            input,
            (ended) =>
              subscriptions.deliveriesTo(subscribers, {
                caseId: input.caseId,
                workspaceId: ended.workspaceId,
                workflowId: ended.workflowId,
                status: input.status,
                finishedAt: ended.finishedAt ?? new Date().toISOString(),
                results: input.progress.results,
                ...(input.progress.error ? { error: input.progress.error } : {}),
              }),
            delivery,
          );
          throw killed;
        },
      },
      callbacks: { start: () => Promise.reject(killed) },
      events: { dispatchUnstarted: () => Promise.reject(killed) },
    });
    expect(await dying.reconcile()).toBe(0);
    expect((await caseStatus(svc, caseId)).status).toBe('FAILED');
    const [written] = (await callbacksOf(svc, caseId)).deliveries;
    expect(written).toMatchObject({ status: 'pending', workflowId: `callback-${caseId}`, attempts: [] });

    // After the restart: the service's own reconciler has nothing to close, and a sweep within the grace period
    // leaves the deliveries to whatever should be starting them.
    const { caseReconciler, deliverySweep } = context.services;
    expect(await caseReconciler.reconcile()).toBe(0);
    expect(await deliverySweep.sweep()).toBe(0);
    await pastSweepGrace(svc);
    expect(callback.received).toHaveLength(0);
    expect(subscriber.received).toHaveLength(0);

    expect(await deliverySweep.sweep()).toBe(2);
    await deliveredOnce(caseId, wf.workflowId);

    // Started once: a later pass finds their workflows (delivered, nothing pending), and nothing more arrives.
    expect(await deliverySweep.sweep()).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(callback.received).toHaveLength(1);
    expect(subscriber.received).toHaveLength(1);
    const metrics = await svc.request('GET', '/metrics', { key: null });
    expect(metrics.text).toMatch(/^caseflow_callback_deliveries_swept_total\{action="started"\} 2$/m);
  }, 60_000);
});
