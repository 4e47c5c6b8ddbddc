import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { answered, startTestService, type TestService } from '../support/harness.js';
import { caseStatus, createWorkflow, startCase } from '../cases/support.js';
import { sleeper } from '../support/graphs.js';
import { Receiver, type ReceivedCallback } from './receiver.js';
import { callbacksOf, webhookSecret } from './support.js';

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
});
