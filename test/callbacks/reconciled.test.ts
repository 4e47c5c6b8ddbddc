import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { Registry } from 'prom-client';
import { answered, startTestService, type TestService } from '../support/harness.js';
import { caseStatus, createWorkflow, startCase } from '../cases/support.js';
import { sleeper } from '../support/graphs.js';
import { Receiver, type ReceivedCallback } from './receiver.js';
import { callbacksOf, webhookSecret } from './support.js';
import { CaseRunReconciler } from '../../src/cases/run-reconciler.js';
import { createActivities } from '../../activities/index.js';
import { caseCallbackDelivery } from '../../src/temporal/contracts/callback-delivery.js';
import { outcomeOnly } from '../../src/domain/cases.js';
import { createRepositories } from '../../src/store/repositories.js';
import { TemporalCallbackDeliveries } from '../../src/temporal/gateways/callback-deliveries.js';
import { TemporalCaseRuns } from '../../src/temporal/gateways/case-runs.js';

/** The payload after verifying its Standard Webhooks signature with `secret` (throws when it does not verify). */
function verified(secret: string, call: ReceivedCallback): Record<string, unknown> {
  return new Webhook(secret).verify(call.body, call.headers as Record<string, string>) as Record<string, unknown>;
}

describe('a case the reconciler closes', () => {
  let svc: TestService;
  const callback = new Receiver();
  const subscriber = new Receiver();

  beforeAll(async () => {
    svc = await startTestService({
      // No periodic pass: the test runs the passes itself.
      config: {
        cases: { reconcileIntervalMs: 3_600_000 },
        callbacks: { initialIntervalMs: 500, maximumIntervalMs: 1000, maxElapsedMs: 20_000 },
      },
    });
    await callback.listen();
    await subscriber.listen();
  });
  afterAll(async () => {
    await Promise.all([callback.close(), subscriber.close()]);
    await svc?.stop();
  });

  it('calls back its callbackUrl and tells its subscribers, once, though two passes close it at the same moment', async () => {
    const subscription = await answered(
      svc.client.POST('/api/v1/subscriptions', {
        body: { workspaceId: svc.workspaceId, url: subscriber.url, eventTypes: ['case.failed'] },
      }),
      201,
    );
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

    await expect.poll(() => callback.received.length, { timeout: 15_000 }).toBe(1);
    await expect.poll(() => subscriber.received.length, { timeout: 15_000 }).toBe(1);
    const body = verified(await webhookSecret(svc), callback.received[0]!);
    expect(body).toMatchObject({ caseId, status: 'FAILED', results: {} });
    expect(JSON.stringify(body.error)).toContain('terminated');
    expect(verified(subscription.secret, subscriber.received[0]!)).toMatchObject({
      type: 'case.failed',
      data: { caseId, workspaceId: svc.workspaceId, workflowId: wf.workflowId, status: 'FAILED' },
    });
    // The callback is in the case's delivery log, delivered at its first attempt.
    await expect
      .poll(async () => (await callbacksOf(svc, caseId)).deliveries, { timeout: 10_000 })
      .toEqual([
        expect.objectContaining({
          status: 'delivered',
          workflowId: `callback-${caseId}`,
          attempts: [expect.objectContaining({ responseStatus: 200 })],
        }),
      ]);

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
    const repos = createRepositories(context.store.db);
    const reconciler = new CaseRunReconciler({
      repo: repos.cases,
      runs: new TemporalCaseRuns(context.temporal, new Registry(), context.config.temporal.caseWorkflowTaskTimeoutMs),
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
      deliveries: repos.callbacks,
      events: subscriptions,
      logger: context.logger,
      childStartGraceMs: 0,
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
    expect(ended).toEqual({});
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(callback.received).toHaveLength(1);
    expect(verified(await webhookSecret(svc), callback.received[0]!)).toMatchObject({ caseId, status: 'FAILED' });
    expect((await caseStatus(svc, caseId)).status).toBe('FAILED');
  }, 60_000);
});
