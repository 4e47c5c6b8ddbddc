import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WorkflowNotFoundError } from '@temporalio/client';
import { Webhook } from 'standardwebhooks';
import { refused, startTestService, type TestService } from '../support/harness.js';
import { freePort } from '../../src/net/free-port.js';
import { caseStatus, createWorkflow, results, startCase, waitForEnd } from '../cases/support.js';
import { Graph } from '../support/graphs.js';
import { Receiver } from './receiver.js';
import { callbacksOf, webhookSecret } from './support.js';

describe('callbacks from real cases', () => {
  let svc: TestService;
  let workflowId: string;
  const receivers: Receiver[] = [];

  beforeAll(async () => {
    svc = await startTestService({
      config: { callbacks: { initialIntervalMs: 1000, maximumIntervalMs: 1000, maxElapsedMs: 20_000 } },
    });
    const g = new Graph();
    const input = g.input([{ name: 'greeting' }]);
    const output = g.output([{ name: 'greeting' }]);
    g.edge(input, output);
    workflowId = (await createWorkflow(svc, g, 'echo')).workflowId;
  });
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((r) => r.close()));
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('POSTs the same results as the results endpoint, signed, when the case completes', async () => {
    const hook = new Receiver();
    await hook.listen();
    receivers.push(hook);
    const caseId = await startCase(svc, workflowId, { greeting: 'hello' }, { callbackUrl: hook.url });
    expect((await waitForEnd(svc, caseId)).status).toBe('COMPLETED');
    await expect.poll(() => hook.received.length, { timeout: 15_000 }).toBe(1);

    const secret = await webhookSecret(svc);
    const call = hook.received[0]!;
    const payload = new Webhook(secret).verify(call.body, call.headers as Record<string, string>);
    expect(payload).toEqual({ caseId, status: 'COMPLETED', results: await results(svc, caseId) });

    await expect
      .poll(async () => (await callbacksOf(svc, caseId)).deliveries[0]?.status, { timeout: 10_000 })
      .toBe('delivered');
  });

  it('makes the first attempt inside the case run: a receiver that answers needs no retry workflow', async () => {
    const hook = new Receiver();
    await hook.listen();
    receivers.push(hook);
    const caseId = await startCase(svc, workflowId, { greeting: 'fast' }, { callbackUrl: hook.url });
    await expect.poll(() => hook.received.length, { timeout: 15_000 }).toBe(1);
    const [delivery] = (await callbacksOf(svc, caseId)).deliveries;
    expect(delivery).toMatchObject({ status: 'delivered', workflowId: `case-${caseId}` });
    expect(delivery?.attempts).toHaveLength(1);
    const { client } = svc.service.context.temporal;
    await expect(client.workflow.getHandle(`callback-${caseId}`).describe()).rejects.toBeInstanceOf(
      WorkflowNotFoundError,
    );
  });

  it('lists no delivery and refuses to redeliver for a case run without a callbackUrl', async () => {
    const caseId = await startCase(svc, workflowId, { greeting: 'quiet' });
    expect((await waitForEnd(svc, caseId)).status).toBe('COMPLETED');
    expect(await callbacksOf(svc, caseId)).toEqual({ caseId, deliveries: [] });
    const redeliver = await refused(
      svc.client.POST('/api/v1/case/{caseId}/callbacks/redeliver', { params: { path: { caseId } } }),
      409,
    );
    expect(redeliver).toMatchObject({ statusCode: 409, errorCode: 'CONFLICT' });
  });

  it('never holds the case back while the receiver is down, and delivers later', async () => {
    const port = await freePort();
    const caseId = await startCase(
      svc,
      workflowId,
      { greeting: 'later' },
      { callbackUrl: `http://127.0.0.1:${port}/hook` },
    );
    expect((await waitForEnd(svc, caseId)).status).toBe('COMPLETED');
    await expect
      .poll(async () => (await callbacksOf(svc, caseId)).deliveries[0]?.attemptCount ?? 0, {
        timeout: 15_000,
      })
      .toBeGreaterThanOrEqual(1);
    expect((await callbacksOf(svc, caseId)).deliveries[0]?.status).toBe('pending');
    expect((await caseStatus(svc, caseId)).status).toBe('COMPLETED');

    const hook = new Receiver();
    await hook.listen(port);
    receivers.push(hook);
    await expect.poll(() => hook.received.length, { timeout: 15_000 }).toBe(1);
    expect(JSON.parse(hook.received[0]!.body)).toMatchObject({
      caseId,
      status: 'COMPLETED',
      results: { greeting: { value: 'later' } },
    });
    // Attempt 1 was the case run's own; the retry workflow carried on from attempt 2, numbering without gaps or repeats.
    await expect
      .poll(async () => (await callbacksOf(svc, caseId)).deliveries[0]?.status, { timeout: 10_000 })
      .toBe('delivered');
    const [delivery] = (await callbacksOf(svc, caseId)).deliveries;
    expect(delivery?.workflowId).toBe(`callback-${caseId}`);
    const numbers = delivery?.attempts.map((a) => a.attempt) ?? [];
    expect(numbers).toEqual(numbers.map((_n, i) => i + 1));
    expect(numbers.length).toBeGreaterThanOrEqual(2);
  });
});
