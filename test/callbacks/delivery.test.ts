import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import type { CallbackDeliveryInput } from '../../src/temporal/contracts/callback-delivery.js';
import { answered, refused, startTestService, type TestService } from '../support/harness.js';
import { freePort } from '../../src/net/free-port.js';
import { Receiver } from './receiver.js';
import { startWorkflow } from '../../src/temporal/contracts/start.js';
import { NoAnswerInTimeError } from '../../src/temporal/engine-health.js';
import { TemporalCallbackDeliveries } from '../../src/temporal/gateways/callback-deliveries.js';
import { callbackDeliveryContract } from '../../src/temporal/contracts/callback-delivery.js';
import { clientFor, newKey, newWorkspace } from '../support/keys.js';
import { callbacksOf, webhookSecret } from './support.js';

type DeliveryView = Awaited<ReturnType<typeof callbacksOf>>['deliveries'][number];

// A short schedule so retries happen within a test: 1 s, 2 s, 2 s, … for at most 6 s. (Temporal's timers
// have about one second of granularity, so shorter intervals would not show the backoff.)
const schedule = {
  initialIntervalMs: 1000,
  backoffCoefficient: 2,
  maximumIntervalMs: 2000,
  maxElapsedMs: 6000,
  timeoutMs: 2000,
};

describe('case completion callbacks', () => {
  let svc: TestService;
  const receivers: Receiver[] = [];

  async function receiver(responder?: ConstructorParameters<typeof Receiver>[0], port = 0): Promise<Receiver> {
    const r = new Receiver(responder);
    await r.listen(port);
    receivers.push(r);
    return r;
  }

  function input(url: string, overrides: Partial<CallbackDeliveryInput> = {}): CallbackDeliveryInput {
    const caseId = randomUUID();
    return {
      deliveryId: randomUUID(),
      caseId,
      workspaceId: svc.workspaceId,
      callbackUrl: url,
      body: { caseId, status: 'COMPLETED', results: { total: { value: 42, type: 'float', displayName: 'Total' } } },
      ...overrides,
    };
  }

  async function startDelivery(args: CallbackDeliveryInput, workflowId = `callback-${args.caseId}`) {
    return startWorkflow(svc.service.context.temporal.client.workflow, callbackDeliveryContract, {
      taskQueue: svc.taskQueue,
      workflowId,
      args: [args],
    });
  }

  const deliveries = async (caseId: string, key?: string) => (await callbacksOf(svc, caseId, key)).deliveries;
  const currentSecret = () => webhookSecret(svc);
  const redeliver = (caseId: string, key?: string) =>
    (key ? clientFor(svc, key) : svc.client).POST('/api/v1/case/{caseId}/callbacks/redeliver', {
      params: { path: { caseId } },
    });

  beforeAll(async () => {
    svc = await startTestService({ config: { callbacks: schedule } });
  });
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((r) => r.close()));
  });
  afterAll(async () => {
    await svc.stop();
  });

  it('POSTs the body once, signed the Standard Webhooks way with the workspace secret', async () => {
    const hook = await receiver();
    const args = input(hook.url);
    const handle = await startDelivery(args);
    const result = await handle.result();
    expect(result).toEqual({ deliveryId: args.deliveryId, status: 'delivered', attempts: 1 });

    expect(hook.received).toHaveLength(1);
    const call = hook.received[0]!;
    expect(JSON.parse(call.body)).toEqual(args.body);
    expect(call.headers['content-type']).toBe('application/json');
    expect(call.headers['webhook-id']).toBe(args.deliveryId);
    expect(Math.abs(Number(call.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
    expect(call.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);

    // Verified by an independent implementation of the standard.
    const secret = await currentSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(secret).verify(call.body, call.headers as Record<string, string>)).toEqual(args.body);
    expect(() =>
      new Webhook(secret).verify(call.body.replace('42', '43'), call.headers as Record<string, string>),
    ).toThrow(WebhookVerificationError);
    const otherSecret = 'whsec_' + Buffer.alloc(24, 7).toString('base64');
    expect(() => new Webhook(otherSecret).verify(call.body, call.headers as Record<string, string>)).toThrow(
      WebhookVerificationError,
    );

    const [delivery] = await deliveries(args.caseId);
    expect(delivery).toMatchObject({
      id: args.deliveryId,
      url: hook.url,
      status: 'delivered',
      attemptCount: 1,
      nextAttemptAt: null,
      payload: args.body,
    });
    expect(delivery!.attempts).toEqual([
      {
        attempt: 1,
        startedAt: expect.any(String),
        durationMs: expect.any(Number),
        responseStatus: 200,
        responseBody: 'ok',
        error: null,
      },
    ]);
  });

  it('keeps the secret encrypted in the store', async () => {
    const secret = await currentSecret();
    const row = await svc.service.context.store.db
      .selectFrom('webhook_secrets')
      .selectAll()
      .where('workspace_id', '=', svc.workspaceId)
      .executeTakeFirstOrThrow();
    expect(row.secret_ciphertext).toMatch(/^v1:[A-Za-z0-9_-]+:[A-Za-z0-9_-]+$/);
    expect(JSON.stringify(row)).not.toContain(secret.slice('whsec_'.length));
  });

  it('retries while the receiver is down and delivers once it is up, recording every attempt', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/hook`;
    const args = input(url);
    const handle = await startDelivery(args);

    // Wait for at least two refused attempts, readable through the API while the delivery is pending.
    let seen: DeliveryView | undefined;
    await expect
      .poll(
        async () => {
          seen = (await deliveries(args.caseId))[0];
          return seen?.attempts.length ?? 0;
        },
        { timeout: 15_000, interval: 100 },
      )
      .toBeGreaterThanOrEqual(2);
    expect(seen).toMatchObject({ status: 'pending' });
    expect(seen!.nextAttemptAt).not.toBeNull();
    expect(seen!.attempts[0]).toMatchObject({
      attempt: 1,
      responseStatus: null,
      responseBody: null,
      error: expect.stringContaining('ECONNREFUSED'),
    });

    const hook = await receiver(undefined, port);
    const result = await handle.result();
    expect(result.status).toBe('delivered');
    expect(result.attempts).toBeGreaterThanOrEqual(3);
    expect(hook.received).toHaveLength(1);
    expect(hook.received[0]!.headers['webhook-id']).toBe(args.deliveryId);
    expect(
      new Webhook(await currentSecret()).verify(
        hook.received[0]!.body,
        hook.received[0]!.headers as Record<string, string>,
      ),
    ).toEqual(args.body);

    const [delivery] = await deliveries(args.caseId);
    expect(delivery).toMatchObject({ status: 'delivered', attemptCount: result.attempts, nextAttemptAt: null });
    expect(delivery!.attempts.map((a) => a.attempt)).toEqual(Array.from({ length: result.attempts }, (_, i) => i + 1));
    expect(delivery!.attempts.slice(0, -1).every((a) => a.responseStatus === null && a.error !== null)).toBe(true);
    expect(delivery!.attempts.at(-1)).toMatchObject({ responseStatus: 200, error: null });
    // Backoff: the gaps between attempts grow.
    const starts = delivery!.attempts.map((a) => Date.parse(a.startedAt));
    expect(starts[2]! - starts[1]!).toBeGreaterThan(starts[1]! - starts[0]!);
  });

  it('gives up after the schedule when the receiver keeps answering 500, keeping 1 KB of each answer', async () => {
    const hook = await receiver((_call, res) => {
      res.statusCode = 500;
      res.end('x'.repeat(3000));
    });
    const args = input(hook.url);
    args.body = { ...args.body, status: 'FAILED', results: {}, error: { message: 'node blew up', nodeId: 'n1' } };
    const result = await (await startDelivery(args)).result();
    expect(result.status).toBe('failed');
    expect(result.attempts).toBeGreaterThanOrEqual(3);
    expect(hook.received).toHaveLength(result.attempts);
    expect(new Set(hook.received.map((c) => c.headers['webhook-id']))).toEqual(new Set([args.deliveryId]));

    const [delivery] = await deliveries(args.caseId);
    expect(delivery).toMatchObject({
      status: 'failed',
      attemptCount: result.attempts,
      nextAttemptAt: null,
      payload: args.body,
    });
    expect(delivery!.attempts).toHaveLength(result.attempts);
    for (const attempt of delivery!.attempts) {
      expect(attempt).toMatchObject({ responseStatus: 500, error: 'receiver answered HTTP 500' });
      expect(attempt.responseBody).toBe('x'.repeat(1024));
    }
    const span = Date.parse(delivery!.attempts.at(-1)!.startedAt) - Date.parse(delivery!.attempts[0]!.startedAt);
    expect(span).toBeLessThanOrEqual(schedule.maxElapsedMs);
  });

  it('stops at once on 410 Gone, and treats a redirect as a failure without following it', async () => {
    const gone = await receiver((_call, res) => {
      res.statusCode = 410;
      res.end();
    });
    const args = input(gone.url);
    expect(await (await startDelivery(args)).result()).toEqual({
      deliveryId: args.deliveryId,
      status: 'failed',
      attempts: 1,
    });

    const target = await receiver();
    let redirects = 0;
    const redirecting = await receiver((_call, res) => {
      redirects += 1;
      res.statusCode = redirects === 1 ? 307 : 204;
      if (redirects === 1) res.setHeader('location', target.url);
      res.end();
    });
    const moved = input(redirecting.url);
    expect(await (await startDelivery(moved)).result()).toMatchObject({ status: 'delivered', attempts: 2 });
    expect(target.received).toHaveLength(0);
    const [delivery] = await deliveries(moved.caseId);
    expect(delivery!.attempts.map((a) => a.responseStatus)).toEqual([307, 204]);
  });

  it('redelivers the last body as a new delivery, with permissions checked', async () => {
    const hook = await receiver();
    const args = input(hook.url);
    await (await startDelivery(args)).result();

    const readOnly = (await newKey(svc, ['case:read'], { userId: svc.userId })).key;
    await refused(redeliver(args.caseId, readOnly), 403);
    expect((await svc.request('POST', `/api/v1/case/${args.caseId}/callbacks/redeliver`, { key: null })).status).toBe(
      401,
    );
    expect(await refused(redeliver('not-a-uuid'), 400)).toMatchObject({
      statusCode: 400,
      errorCode: 'VALIDATION_ERROR',
    });
    expect(await refused(redeliver(randomUUID()), 404)).toMatchObject({ statusCode: 404, errorCode: 'NOT_FOUND' });
    expect(await deliveries(args.caseId, readOnly)).toHaveLength(1);

    const { deliveryId, workflowId } = await answered(redeliver(args.caseId), 202);
    expect(workflowId).toBe(`callback-${args.caseId}-redeliver-1`);
    expect(deliveryId).not.toBe(args.deliveryId);
    const result = await svc.service.context.temporal.client.workflow.getHandle(workflowId).result();
    expect(result).toEqual({ deliveryId, status: 'delivered', attempts: 1 });

    expect(hook.received).toHaveLength(2);
    expect(hook.received[1]!.body).toBe(hook.received[0]!.body);
    expect(hook.received[1]!.headers['webhook-id']).toBe(deliveryId);
    expect(
      new Webhook(await currentSecret()).verify(
        hook.received[1]!.body,
        hook.received[1]!.headers as Record<string, string>,
      ),
    ).toEqual(args.body);

    const listed = await deliveries(args.caseId);
    expect(listed.map((d) => [d.id, d.status, d.workflowId])).toEqual([
      [args.deliveryId, 'delivered', `callback-${args.caseId}`],
      [deliveryId, 'delivered', workflowId],
    ]);
    const second = await answered(redeliver(args.caseId), 202);
    expect(second.workflowId).toBe(`callback-${args.caseId}-redeliver-2`);
    await svc.service.context.temporal.client.workflow.getHandle(second.workflowId).result();
  });

  it('keeps a redelivery whose start Temporal left unanswered: accepted, pending for the sweep, not a second copy on retry', async () => {
    const hook = await receiver();
    const args = input(hook.url);
    await (await startDelivery(args)).result();
    const start = vi
      .spyOn(TemporalCallbackDeliveries.prototype, 'start')
      .mockRejectedValueOnce(new NoAnswerInTimeError('starting a delivery workflow did not answer within 15000 ms'));
    try {
      const { deliveryId, workflowId } = await answered(redeliver(args.caseId), 202);
      expect(workflowId).toBe(`callback-${args.caseId}-redeliver-1`);
      const listed = await deliveries(args.caseId);
      expect(listed.map((d) => [d.id, d.status])).toEqual([
        [args.deliveryId, 'delivered'],
        [deliveryId, 'pending'],
      ]);
    } finally {
      start.mockRestore();
    }
  });

  it('rotates the secret: the new one is shown, and the old one still verifies during the overlap', async () => {
    const before = await currentSecret();
    // A header check: the secret is never cached.
    const shown = await svc.request('GET', `/api/v1/workspace/${svc.workspaceId}/webhook-secret`);
    expect(shown.headers.get('cache-control')).toBe('no-store');
    const readOnly = clientFor(svc, (await newKey(svc, ['case:read'], { userId: svc.userId })).key);
    const workspace = (workspaceId: string) => ({ params: { path: { workspaceId } } });
    await refused(readOnly.GET('/api/v1/workspace/{workspaceId}/webhook-secret', workspace(svc.workspaceId)), 403);
    await refused(
      readOnly.POST('/api/v1/workspace/{workspaceId}/webhook-secret/rotate', workspace(svc.workspaceId)),
      403,
    );
    await refused(
      svc.client.POST('/api/v1/workspace/{workspaceId}/webhook-secret/rotate', workspace(randomUUID())),
      404,
    );
    expect(await currentSecret()).toBe(before);

    const after = await answered(
      svc.client.POST('/api/v1/workspace/{workspaceId}/webhook-secret/rotate', workspace(svc.workspaceId)),
      200,
    );
    expect(after.secret).not.toBe(before);
    expect(Date.parse(after.previousValidUntil ?? '')).toBeGreaterThan(Date.now());
    expect(await currentSecret()).toBe(after.secret);

    const hook = await receiver();
    const args = input(hook.url);
    await (await startDelivery(args)).result();
    const call = hook.received[0]!;
    expect(String(call.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(new Webhook(after.secret).verify(call.body, call.headers as Record<string, string>)).toEqual(args.body);
    expect(new Webhook(before).verify(call.body, call.headers as Record<string, string>)).toEqual(args.body);
  });

  it('answers the callbacks list with 400, 401, 404 and 403 in the error shape', async () => {
    const list = (caseId: string, key?: string) =>
      (key ? clientFor(svc, key) : svc.client).GET('/api/v1/case/{caseId}/callbacks', { params: { path: { caseId } } });
    await refused(list('nope'), 400);
    expect((await svc.request('GET', `/api/v1/case/${randomUUID()}/callbacks`, { key: null })).status).toBe(401);
    expect(await refused(list(randomUUID()), 404)).toMatchObject({ statusCode: 404, errorCode: 'NOT_FOUND' });

    const hook = await receiver();
    const args = input(hook.url);
    await (await startDelivery(args)).result();
    const elsewhere = (
      await newKey(svc, ['case:full'], { userId: svc.userId, workspaceIds: [await newWorkspace(svc)] })
    ).key;
    expect(await refused(list(args.caseId, elsewhere), 403)).toMatchObject({ statusCode: 403, errorCode: 'FORBIDDEN' });
  });
});
