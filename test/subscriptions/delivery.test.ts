import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { answered, answeredEmpty, refused, startTestService, type TestService } from '../support/harness.js';
import { Receiver, type ReceivedCallback } from '../callbacks/receiver.js';
import { createWorkflow, startCase, waitForEnd } from '../cases/support.js';
import { Graph, py, textChain } from '../support/graphs.js';
import { clientFor, newCaller, newKey } from '../support/keys.js';
import { CaseRepo } from '../../src/store/case-repo.js';
import { parseKey } from '../../src/auth/api-keys.js';
import { outcomeOnly } from '../../src/domain/cases.js';

type EventType = 'case.completed' | 'case.failed' | 'case.timed_out' | 'case.cancelled';

let svc: TestService;
/** input(text) → output(text): completes. */
let echo: string;
/** input(text) → Python that raises → output: fails. */
let failing: string;
const receivers: Receiver[] = [];

async function receiver(): Promise<Receiver> {
  const hook = new Receiver();
  await hook.listen();
  receivers.push(hook);
  return hook;
}

async function subscribe(url: string, eventTypes: EventType[]) {
  return answered(
    svc.client.POST('/api/v1/subscriptions', { body: { workspaceId: svc.workspaceId, url, eventTypes } }),
    201,
  );
}

/** The event, after verifying the Standard Webhooks signature with `secret` (throws when it does not verify). */
function verified(secret: string, call: ReceivedCallback): { type: string; data: Record<string, unknown> } {
  return new Webhook(secret).verify(call.body, call.headers as Record<string, string>) as {
    type: string;
    data: Record<string, unknown>;
  };
}

beforeAll(async () => {
  svc = await startTestService({
    config: { callbacks: { initialIntervalMs: 500, maximumIntervalMs: 1000, maxElapsedMs: 20_000 } },
  });
  const g = new Graph();
  const input = g.input([{ name: 'text' }]);
  const output = g.output([{ name: 'text' }]);
  g.edge(input, output);
  echo = (await createWorkflow(svc, g, 'echo')).workflowId;
  failing = (await createWorkflow(svc, textChain('Boom', py('raise ValueError("boom")')), 'failing')).workflowId;
}, 120_000);
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
  // Each test subscribes afresh: the previous test's subscriptions go.
  const { subscriptions } = await answered(svc.client.GET('/api/v1/subscriptions', { params: { query: {} } }), 200);
  for (const s of subscriptions)
    await answeredEmpty(
      svc.client.DELETE('/api/v1/subscriptions/{subscriptionId}', { params: { path: { subscriptionId: s.id } } }),
      204,
    );
});
afterAll(async () => {
  await svc?.stop();
});

describe('event subscriptions', () => {
  it('delivers a failed case to its subscriber, signed with the subscription secret, without a callbackUrl', async () => {
    const hook = await receiver();
    const created = await subscribe(hook.url, ['case.failed']);
    expect(created.secret).toMatch(/^whsec_/);
    const caseId = await startCase(svc, failing, { text: 'x' });
    expect((await waitForEnd(svc, caseId)).status).toBe('FAILED');
    await expect.poll(() => hook.received.length, { timeout: 15_000 }).toBe(1);
    const event = verified(created.secret, hook.received[0]!);
    expect(event).toMatchObject({
      type: 'case.failed',
      data: { caseId, workspaceId: svc.workspaceId, workflowId: failing, status: 'FAILED' },
    });
    expect((event.data.error as { message: string }).message).toContain('boom');
    // The workspace secret does not verify it: each subscription signs with its own.
    const workspaceSecret = await answered(
      svc.client.GET('/api/v1/workspace/{workspaceId}/webhook-secret', {
        params: { path: { workspaceId: svc.workspaceId } },
      }),
      200,
    );
    expect(() => verified(workspaceSecret.secret, hook.received[0]!)).toThrow();

    // The case's own callbacks list is about its callbackUrl: none.
    expect(
      await answered(svc.client.GET('/api/v1/case/{caseId}/callbacks', { params: { path: { caseId } } }), 200),
    ).toEqual({ caseId, deliveries: [] });
    // The subscription's delivery log has it, delivered at the first attempt.
    await expect
      .poll(
        async () => {
          const log = await answered(
            svc.client.GET('/api/v1/subscriptions/{subscriptionId}/deliveries', {
              params: { path: { subscriptionId: created.id }, query: {} },
            }),
            200,
          );
          return log.deliveries.map((d) => ({ caseId: d.caseId, status: d.status, attempts: d.attempts.length }));
        },
        { timeout: 10_000 },
      )
      .toEqual([{ caseId, status: 'delivered', attempts: 1 }]);
  });

  it('sends each subscriber only the event types it asked for', async () => {
    const failures = await receiver();
    const everything = await receiver();
    await subscribe(failures.url, ['case.failed']);
    const all = await subscribe(everything.url, ['case.completed', 'case.failed']);
    const completed = await startCase(svc, echo, { text: 'fine' });
    const failed = await startCase(svc, failing, { text: 'x' });
    await waitForEnd(svc, completed);
    await waitForEnd(svc, failed);
    await expect.poll(() => everything.received.length, { timeout: 15_000 }).toBe(2);
    await expect.poll(() => failures.received.length, { timeout: 15_000 }).toBe(1);
    const types = everything.received.map((call) => verified(all.secret, call).type).sort();
    expect(types).toEqual(['case.completed', 'case.failed']);
    expect(JSON.parse(failures.received[0]!.body)).toMatchObject({ type: 'case.failed', data: { caseId: failed } });
  });

  it('retries a receiver that is down with backoff, and redelivers on request', async () => {
    const hook = await receiver();
    hook.respondWith((_call, res) => {
      res.statusCode = hook.received.length === 1 ? 503 : 200;
      res.end();
    });
    const created = await subscribe(hook.url, ['case.completed']);
    const caseId = await startCase(svc, echo, { text: 'later' });
    await waitForEnd(svc, caseId);
    await expect.poll(() => hook.received.length, { timeout: 15_000 }).toBe(2);
    const [first, second] = hook.received;
    // One delivery: the same webhook-id on both attempts (the receiver's dedupe key).
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    const deliveries = async () =>
      (
        await answered(
          svc.client.GET('/api/v1/subscriptions/{subscriptionId}/deliveries', {
            params: { path: { subscriptionId: created.id }, query: {} },
          }),
          200,
        )
      ).deliveries;
    await expect.poll(async () => (await deliveries())[0]?.status, { timeout: 10_000 }).toBe('delivered');
    const [delivery] = await deliveries();
    expect(delivery?.attempts.map((a) => a.responseStatus)).toEqual([503, 200]);

    const redelivery = await answered(
      svc.client.POST('/api/v1/subscriptions/{subscriptionId}/deliveries/{deliveryId}/redeliver', {
        params: { path: { subscriptionId: created.id, deliveryId: delivery!.id } },
      }),
      202,
    );
    await expect.poll(() => hook.received.length, { timeout: 15_000 }).toBe(3);
    const third = hook.received[2]!;
    expect(third.headers['webhook-id']).toBe(redelivery.deliveryId);
    expect(verified(created.secret, third)).toMatchObject({ type: 'case.completed', data: { caseId } });
    expect(await deliveries()).toHaveLength(2);
  });

  it('stops sending while disabled and again after enabled', async () => {
    const hook = await receiver();
    const created = await subscribe(hook.url, ['case.completed']);
    const path = { subscriptionId: created.id };
    const disabled = await answered(
      svc.client.PATCH('/api/v1/subscriptions/{subscriptionId}', { params: { path }, body: { enabled: false } }),
      200,
    );
    expect(disabled.enabled).toBe(false);
    const quiet = await startCase(svc, echo, { text: 'quiet' });
    await waitForEnd(svc, quiet);
    await answered(
      svc.client.PATCH('/api/v1/subscriptions/{subscriptionId}', { params: { path }, body: { enabled: true } }),
      200,
    );
    const heard = await startCase(svc, echo, { text: 'heard' });
    await waitForEnd(svc, heard);
    await expect.poll(() => hook.received.length, { timeout: 15_000 }).toBe(1);
    expect(JSON.parse(hook.received[0]!.body)).toMatchObject({ data: { caseId: heard } });
    const log = await answered(
      svc.client.GET('/api/v1/subscriptions/{subscriptionId}/deliveries', { params: { path, query: {} } }),
      200,
    );
    expect(log.deliveries.map((d) => d.caseId)).toEqual([heard]);
  });

  it('delivers an end recorded by a process that died before starting the delivery, when the end is retried', async () => {
    const hook = await receiver();
    const created = await subscribe(hook.url, ['case.completed']);
    // A PENDING case, ended the way the endCase activity ends it, but only as far as the commit.
    const caseId = (await answered(svc.client.POST('/api/v1/case', { body: { workflowId: echo } }), 201)).caseId;
    const { services, store } = svc.service.context;
    const end = {
      caseId,
      workspaceId: svc.workspaceId,
      status: 'COMPLETED' as const,
      runId: 'run-that-died',
      progress: outcomeOnly(caseId, 'COMPLETED', { results: {} }),
    };
    const subscribers = await services.subscriptions.subscribersOf(svc.workspaceId, 'COMPLETED');
    await new CaseRepo(store.db).finalize(end, (ended) =>
      services.subscriptions.deliveriesTo(subscribers, {
        caseId,
        workspaceId: ended.workspaceId,
        workflowId: ended.workflowId,
        status: 'COMPLETED',
        finishedAt: ended.finishedAt ?? '',
        results: {},
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(hook.received).toHaveLength(0);
    // Temporal runs the local activity again: the end is recorded already, the delivery starts now.
    expect(await services.cases.finalize(end)).toBe(false);
    await expect.poll(() => hook.received.length, { timeout: 15_000 }).toBe(1);
    expect(verified(created.secret, hook.received[0]!)).toMatchObject({ type: 'case.completed', data: { caseId } });
    // A third try starts nothing more.
    expect(await services.cases.finalize(end)).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(hook.received).toHaveLength(1);
  });

  it('signs with the old and the new secret after a rotation, and shows no secret afterwards', async () => {
    const hook = await receiver();
    const created = await subscribe(hook.url, ['case.completed']);
    const rotated = await answered(
      svc.client.POST('/api/v1/subscriptions/{subscriptionId}/rotate-secret', {
        params: { path: { subscriptionId: created.id } },
      }),
      200,
    );
    expect(rotated.secret).not.toBe(created.secret);
    const caseId = await startCase(svc, echo, { text: 'rotated' });
    await waitForEnd(svc, caseId);
    await expect.poll(() => hook.received.length, { timeout: 15_000 }).toBe(1);
    const call = hook.received[0]!;
    expect(String(call.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verified(rotated.secret, call).data.caseId).toBe(caseId);
    expect(verified(created.secret, call).data.caseId).toBe(caseId);
    const shown = await answered(
      svc.client.GET('/api/v1/subscriptions/{subscriptionId}', { params: { path: { subscriptionId: created.id } } }),
      200,
    );
    expect(JSON.stringify(shown)).not.toContain('whsec_');
  });

  it('refuses a URL the outbound policy refuses, and bad event types, creating nothing', async () => {
    const metadata = [
      'http://169.254.169.254/latest/meta-data',
      'http://[::ffff:169.254.169.254]/latest/meta-data',
      'http://2852039166/latest/meta-data',
    ];
    for (const url of [...metadata, 'http://10.1.2.3/hook', 'ftp://example.com/x']) {
      const r = await refused(
        svc.client.POST('/api/v1/subscriptions', {
          body: { workspaceId: svc.workspaceId, url, eventTypes: ['case.failed'] },
        }),
        400,
      );
      expect(r, url).toMatchObject({ errorCode: 'VALIDATION_ERROR', statusCode: 400 });
      expect(JSON.stringify(r.metadata)).toContain('body.url');
    }
    for (const eventTypes of [[], ['case.exploded']]) {
      const r = await svc.request('POST', '/api/v1/subscriptions', {
        body: { workspaceId: svc.workspaceId, url: 'http://127.0.0.1:9/hook', eventTypes },
      });
      expect(r.status).toBe(400);
    }
    const listed = await answered(svc.client.GET('/api/v1/subscriptions', { params: { query: {} } }), 200);
    expect(listed.subscriptions).toEqual([]);
  });

  it("is another organization's 404 and needs Case: Full to manage", async () => {
    const hook = await receiver();
    const created = await subscribe(hook.url, ['case.failed']);
    const attacker = (await newCaller(svc, ['case:full', 'workflow:full'])).key;
    const base = `/api/v1/subscriptions/${created.id}`;
    for (const [method, path, body] of [
      ['GET', base, undefined],
      ['PATCH', base, { enabled: false }],
      ['DELETE', base, undefined],
      ['POST', `${base}/rotate-secret`, undefined],
      ['GET', `${base}/deliveries`, undefined],
    ] as const) {
      const r = await svc.request(method, path, { key: attacker, ...(body ? { body } : {}) });
      expect(r.status, `${method} ${path}`).toBe(404);
    }
    const theirs = clientFor(svc, attacker);
    await refused(
      theirs.POST('/api/v1/subscriptions', {
        body: { workspaceId: svc.workspaceId, url: hook.url, eventTypes: ['case.failed'] },
      }),
      404,
    );
    const theirList = await answered(
      theirs.GET('/api/v1/subscriptions', { params: { query: { workspaceId: svc.workspaceId } } }),
      200,
    );
    expect(theirList).toEqual({ subscriptions: [], nextCursor: null });

    const reader = clientFor(svc, (await newKey(svc, ['case:read'])).key);
    const path = { params: { path: { subscriptionId: created.id } } };
    await answered(reader.GET('/api/v1/subscriptions/{subscriptionId}', path), 200);
    await refused(reader.PATCH('/api/v1/subscriptions/{subscriptionId}', { ...path, body: { enabled: false } }), 403);
    await refused(reader.POST('/api/v1/subscriptions/{subscriptionId}/rotate-secret', path), 403);
    // Still enabled, still ours.
    expect(await answered(svc.client.GET('/api/v1/subscriptions/{subscriptionId}', path), 200)).toMatchObject({
      enabled: true,
      url: hook.url,
    });
    await answeredEmpty(svc.client.DELETE('/api/v1/subscriptions/{subscriptionId}', path), 204);
    await refused(svc.client.GET('/api/v1/subscriptions/{subscriptionId}', path), 404);
  });

  it("stops sending once the key it acts for is revoked: it sent every case's results to a URL that key chose", async () => {
    const { key } = await newKey(svc, ['case:full']);
    const theirs = await receiver();
    const ours = await receiver();
    const created = await answered(
      clientFor(svc, key).POST('/api/v1/subscriptions', {
        body: { workspaceId: svc.workspaceId, url: theirs.url, eventTypes: ['case.completed'] },
      }),
      201,
    );
    const revoked = await svc.admin('POST', `/admin/keys/${parseKey(key)?.id}/revoke`);
    expect(revoked.status, revoked.text).toBeLessThan(300);
    await subscribe(ours.url, ['case.completed']);
    await waitForEnd(svc, await startCase(svc, echo, { text: 'after the revocation' }));
    await expect.poll(() => ours.received.length, { timeout: 15_000 }).toBe(1);
    expect(theirs.received).toEqual([]);

    // Pointed at its URL again by a key that may read the cases, it acts for that key and sends again.
    const path = { params: { path: { subscriptionId: created.id } } };
    await answered(
      svc.client.PATCH('/api/v1/subscriptions/{subscriptionId}', { ...path, body: { url: theirs.url } }),
      200,
    );
    const caseId = await startCase(svc, echo, { text: 'owned again' });
    await waitForEnd(svc, caseId);
    await expect.poll(() => theirs.received.length, { timeout: 15_000 }).toBe(1);
    expect(JSON.parse(theirs.received[0]!.body)).toMatchObject({ data: { caseId } });
  });

  it('lists a page at a time', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) ids.push((await subscribe(`http://127.0.0.1:9/hook-${i}`, ['case.failed'])).id);
    const first = await answered(svc.client.GET('/api/v1/subscriptions', { params: { query: { limit: 2 } } }), 200);
    expect(first.subscriptions).toHaveLength(2);
    const second = await answered(
      svc.client.GET('/api/v1/subscriptions', { params: { query: { limit: 2, cursor: first.nextCursor! } } }),
      200,
    );
    expect(second.nextCursor).toBeNull();
    expect([...first.subscriptions, ...second.subscriptions].map((s) => s.id).sort()).toEqual(ids.sort());
  });
});
