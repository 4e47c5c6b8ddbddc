import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkflowNotFoundError } from '@temporalio/client';
import { Registry } from 'prom-client';
import { DeliverySweep, sweptEnds } from '../../src/callbacks/delivery-sweep.js';
import { createLogger } from '../../src/logging/logger.js';
import { TemporalCallbackDeliveries } from '../../src/temporal/gateways/callback-deliveries.js';
import { startTestService, type TestService } from '../support/harness.js';
import { createWorkflow, startCase } from '../cases/support.js';
import { sleeper } from '../support/graphs.js';
import { Receiver } from './receiver.js';
import { callbacksOf, passesByHand, pastSweepGrace, verified, webhookSecret } from './support.js';
import { createRepositories } from '../../src/store/repositories.js';

/** A callback's delivery row as a process writes it before starting its workflow, and then dies. */
function writeUnstarted(
  svc: TestService,
  caseId: string,
  row: { name: string; url: string; workflowId: string; workspaceId?: string },
) {
  return createRepositories(svc.service.context.store.db).callbacks.createDelivery({
    id: `${caseId}-${row.name}`,
    caseId,
    workspaceId: row.workspaceId ?? svc.workspaceId,
    url: row.url,
    body: JSON.stringify({ caseId, status: 'COMPLETED', results: {} }),
    workflowId: row.workflowId,
  });
}

describe('pending deliveries nothing is delivering', () => {
  let svc: TestService;
  const callback = new Receiver();

  beforeAll(async () => {
    svc = await startTestService({ config: passesByHand });
    await callback.listen();
  });
  afterAll(async () => {
    await callback.close();
    await svc?.stop();
  });

  it("leaves a callback that names its case's run to that run while it runs, and starts its retries once it closed", async () => {
    const wf = await createWorkflow(svc, sleeper(20));
    const caseId = await startCase(svc, wf.workflowId, { text: 'y' }, { callbackUrl: callback.url });
    const { context } = svc.service;
    // As the run writes its end's delivery before its first attempt: the row names the run itself.
    await writeUnstarted(svc, caseId, { name: 'COMPLETED', url: callback.url, workflowId: `case-${caseId}` });
    await pastSweepGrace(svc);
    const { deliverySweep } = context.services;
    expect(await deliverySweep.sweep()).toBe(0);
    const retries = context.temporal.client.workflow.getHandle(`callback-${caseId}`);
    await expect(retries.describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);

    // Terminated between its end's commit and the start of its retries: nothing else would deliver it.
    await context.temporal.client.workflow.getHandle(`case-${caseId}`).terminate('test: closed behind the service');
    expect(await deliverySweep.sweep()).toBe(1);
    await expect.poll(() => callback.received.length, { timeout: 15_000 }).toBe(1);
    expect(verified(await webhookSecret(svc), callback.received[0]!)).toMatchObject({ caseId, status: 'COMPLETED' });
    await expect
      .poll(async () => (await callbacksOf(svc, caseId)).deliveries, { timeout: 10_000 })
      .toEqual([expect.objectContaining({ status: 'delivered', workflowId: `callback-${caseId}` })]);
  }, 60_000);

  it('sends a swept delivery through the outbound policy at its attempt, like every other delivery', async () => {
    const wf = await createWorkflow(svc, sleeper(0));
    const caseId = await startCase(svc, wf.workflowId, { text: 'z' });
    const { context } = svc.service;
    // A redelivery whose process died between its row and its start, to a URL the policy never lets out.
    const url = 'http://169.254.169.254/latest/meta-data/';
    await writeUnstarted(svc, caseId, { name: 'metadata', url, workflowId: `callback-${caseId}-redeliver-1` });
    await pastSweepGrace(svc);
    expect(await context.services.deliverySweep.sweep()).toBe(1);
    await expect
      .poll(async () => (await callbacksOf(svc, caseId)).deliveries[0]?.attempts[0], { timeout: 15_000 })
      .toMatchObject({ attempt: 1, responseStatus: null, error: expect.stringMatching(/metadata/) });
  }, 60_000);

  it('fails a pending delivery whose workflow ended without recording it, instead of finding it at every pass', async () => {
    const failing = new Receiver((_call, res) => {
      res.statusCode = 500;
      res.end();
    });
    await failing.listen();
    try {
      const wf = await createWorkflow(svc, sleeper(0));
      const caseId = await startCase(svc, wf.workflowId, { text: 'w' });
      const { context } = svc.service;
      const workflowId = `callback-${caseId}-redeliver-1`;
      await writeUnstarted(svc, caseId, { name: 'stalled', url: failing.url, workflowId });
      await pastSweepGrace(svc);
      const { deliverySweep } = context.services;
      expect(await deliverySweep.sweep()).toBe(1);
      await expect.poll(() => failing.received.length, { timeout: 15_000 }).toBeGreaterThan(0);
      // Terminated from Temporal between two attempts: nothing records the end of the delivery.
      await context.temporal.client.workflow.getHandle(workflowId).terminate('test: stopped behind the service');
      // Its next attempt was due at most maximumIntervalMs after the last.
      await pastSweepGrace(svc, 1000);
      expect((await callbacksOf(svc, caseId)).deliveries[0]).toMatchObject({ status: 'pending' });
      expect(await deliverySweep.sweep()).toBe(0);
      const [failed] = (await callbacksOf(svc, caseId)).deliveries;
      expect(failed).toMatchObject({ status: 'failed', nextAttemptAt: null });
      // Shown as the others' reasons are: the error of its last attempt (which sent nothing).
      expect(failed?.attempts.at(-1)).toMatchObject({
        attempt: failed?.attemptCount,
        responseStatus: null,
        error: sweptEnds.stalled,
      });
      const metrics = await svc.request('GET', '/metrics', { key: null });
      expect(metrics.text).toMatch(/^caseflow_callback_deliveries_swept_total\{action="failed"\} 1$/m);
    } finally {
      await failing.close();
    }
  }, 60_000);

  it("ends a deleted workspace's pending delivery once, saying so, instead of skipping it at every pass", async () => {
    const wf = await createWorkflow(svc, sleeper(0));
    const caseId = await startCase(svc, wf.workflowId, { text: 'v' });
    const { context } = svc.service;
    const id = `${caseId}-orphan`;
    const { callbacks: repo, tenancy } = createRepositories(context.store.db);
    const gone = (await tenancy.createWorkspace(svc.organizationId, 'deleted')).id;
    const workflowId = `callback-${caseId}-redeliver-1`;
    await writeUnstarted(svc, caseId, { name: 'orphan', url: callback.url, workflowId, workspaceId: gone });
    await pastSweepGrace(svc);
    // The store keeps a workspace its deliveries name (a foreign key); an operator's hand could still remove it.
    const sweep = new DeliverySweep({
      repo,
      tenancy: {
        findWorkspace: (workspaceId) =>
          workspaceId === gone ? Promise.resolve(undefined) : tenancy.findWorkspace(workspaceId),
      },
      deliveries: new TemporalCallbackDeliveries(context.temporal),
      runs: { closedRun: () => Promise.resolve(undefined) },
      graceMs: svc.config.callbacks.sweepGraceMs,
      batch: 100,
      logger: createLogger('silent'),
      registry: new Registry(),
    });
    expect(await sweep.sweep()).toBe(0);
    const [ended] = (await callbacksOf(svc, caseId)).deliveries;
    expect(ended).toMatchObject({ id, status: 'failed', attemptCount: 1, nextAttemptAt: null });
    expect(ended?.attempts).toEqual([
      expect.objectContaining({ attempt: 1, responseStatus: null, error: sweptEnds.workspaceGone }),
    ]);
    // Later passes no longer read it.
    const overdue = await repo.overdueDeliveries(new Date().toISOString(), undefined, 1000);
    expect(overdue.map((d) => d.id)).not.toContain(id);
  }, 60_000);

  it("never starts again a delivery older than Temporal's retention whose workflow Temporal no longer knows", async () => {
    const wf = await createWorkflow(svc, sleeper(0));
    const caseId = await startCase(svc, wf.workflowId, { text: 'u' });
    const { context } = svc.service;
    const workflowId = `callback-${caseId}-redeliver-1`;
    await writeUnstarted(svc, caseId, { name: 'forgotten', url: callback.url, workflowId });
    // As a delivery whose workflow made an attempt it could not record (a 2xx, then the store down), closed, and was
    // deleted a retention later: started again under its id, it would send the receiver what it may have had.
    const retentionMs = await new TemporalCallbackDeliveries(context.temporal).retentionMs();
    if (retentionMs === undefined) throw new Error('the dev server states a retention');
    const longAgo = new Date(Date.now() - retentionMs - 3_600_000).toISOString();
    await context.store.db
      .updateTable('callback_deliveries')
      .set({ created_at: longAgo, next_attempt_at: longAgo, attempts: 1 })
      .where('id', '=', `${caseId}-forgotten`)
      .execute();
    const received = callback.received.length;
    expect(await context.services.deliverySweep.sweep()).toBe(0);
    await expect(context.temporal.client.workflow.getHandle(workflowId).describe()).rejects.toBeInstanceOf(
      WorkflowNotFoundError,
    );
    const [ended] = (await callbacksOf(svc, caseId)).deliveries;
    expect(ended).toMatchObject({ status: 'failed', attemptCount: 2, nextAttemptAt: null });
    expect(ended?.attempts.at(-1)).toMatchObject({ attempt: 2, responseStatus: null, error: sweptEnds.forgotten });
    expect(callback.received).toHaveLength(received);
  }, 60_000);
});
