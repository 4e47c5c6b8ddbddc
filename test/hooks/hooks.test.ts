import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFor, newCaller, newKey } from '../support/keys.js';
import { parseKey } from '../../src/auth/api-keys.js';
import {
  answered,
  answeredEmpty,
  refused,
  startTestService,
  type TestResponse,
  type TestService,
} from '../support/harness.js';
import { createWorkflow, results, waitForEnd } from '../cases/support.js';
import { Graph, sleeper } from '../support/graphs.js';
import { caseIdsOf, createHook as create, deliver, hookPath, sign, type HookBody } from './support.js';

let svc: TestService;
/** input(title, event) → output(title, event) */
let echoId: string;
let attackerKey: string;
let noCaseKey: string;

function echoGraph(): Graph {
  const g = new Graph();
  const fields = [{ name: 'title' }, { name: 'event', optional: true }];
  g.edge(g.input(fields), g.output(fields));
  return g;
}

type Unnamed<T> = T extends unknown ? Omit<T, 'name'> : never;

const createHook = (body: Unnamed<HookBody>, workflowId = echoId) =>
  create(svc, workflowId, { name: 'test hook', ...body });
const listHooks = () =>
  answered(
    svc.client.GET('/api/v1/workflow/{workflowId}/hooks', {
      params: { path: { workflowId: echoId }, query: { limit: 100 } },
    }),
    200,
  );

beforeAll(async () => {
  svc = await startTestService({ config: { hooks: { maxPayloadBytes: 4096 } } });
  echoId = (await createWorkflow(svc, echoGraph(), 'hook echo')).workflowId;
  attackerKey = (await newCaller(svc, ['case:full', 'workflow:full'])).key;
  noCaseKey = (await newKey(svc, ['workflow:full'])).key;
});
afterAll(async () => {
  await svc?.stop();
});

describe('managing hooks', () => {
  it('answers the URL and the secret once; reads never show the secret', async () => {
    const hook = await createHook({ scheme: 'standard-webhooks' });
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(hook.url).toBe(`${svc.url}/hooks/${hook.hookId}`);
    const read = await answered(svc.client.GET('/api/v1/hooks/{hookId}', hookPath(hook.hookId)), 200);
    expect(read).toMatchObject({ hookId: hook.hookId, workflowId: echoId, mode: 'async', enabled: true });
    expect(JSON.stringify(read)).not.toContain(hook.secret.slice(6));
    const list = await listHooks();
    expect(list.hooks.map((h) => h.hookId)).toContain(hook.hookId);
    expect(JSON.stringify(list)).not.toContain(hook.secret.slice(6));
  });

  it('refuses a bad creation with 400 naming the field, and changes nothing', async () => {
    const before = await listHooks();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ scheme: 'hmac-sha256' }, 'body.signatureHeader'],
      [{ scheme: 'github', signatureHeader: 'x-sig' }, 'Unrecognized key: \\"signatureHeader'],
      [{ scheme: 'nope' }, 'body.scheme'],
      [{ scheme: 'github', mapping: { nothere: { body: '/a' } } }, 'body.mapping.nothere'],
      [{ scheme: 'github', mapping: { title: { body: 'no-slash' } } }, 'body.mapping.title'],
      [{ scheme: 'github', mode: 'sync', syncTimeoutMs: 10 }, 'body.syncTimeoutMs'],
    ];
    for (const [body, field] of cases) {
      const r = await svc.request('POST', `/api/v1/workflow/${echoId}/hooks`, { body: { name: 'bad', ...body } });
      expect(r.status, `${JSON.stringify(body)}: ${r.text}`).toBe(400);
      expect(JSON.stringify(r.body.metadata)).toContain(field);
    }
    expect((await listHooks()).hooks).toEqual(before.hooks);
  });

  it('needs Case: Full besides Workflow: Full to create one (a hook starts cases)', async () => {
    await refused(
      clientFor(svc, noCaseKey).POST('/api/v1/workflow/{workflowId}/hooks', {
        params: { path: { workflowId: echoId } },
        body: { name: 'x', scheme: 'github' },
      }),
      403,
    );
  });

  it('needs Case: Full to rotate or change one too (its secret starts cases, a change shapes them); renaming, disabling, deleting do not', async () => {
    const hook = await createHook({ scheme: 'github' });
    const noCase = clientFor(svc, noCaseKey);
    await refused(noCase.POST('/api/v1/hooks/{hookId}/rotate-secret', { ...hookPath(hook.hookId), body: {} }), 403);
    for (const body of [{ mode: 'sync' as const }, { enabled: true }, { mapping: { title: { body: '/x' } } }])
      await refused(noCase.PATCH('/api/v1/hooks/{hookId}', { ...hookPath(hook.hookId), body }), 403);
    const intact = await answered(svc.client.GET('/api/v1/hooks/{hookId}', hookPath(hook.hookId)), 200);
    expect(intact).toMatchObject({ mode: 'async', mapping: null });
    // The creator's secret is still the one in force.
    const body = JSON.stringify({ title: 'mine' });
    expect((await deliver(svc, hook.hookId, body, sign.github(hook.secret, body))).status).toBe(202);
    const stopped = await answered(
      noCase.PATCH('/api/v1/hooks/{hookId}', { ...hookPath(hook.hookId), body: { name: 'stopped', enabled: false } }),
      200,
    );
    expect(stopped).toMatchObject({ name: 'stopped', enabled: false });
    await answeredEmpty(noCase.DELETE('/api/v1/hooks/{hookId}', hookPath(hook.hookId)), 204);
  });

  it("gives another organization 404 for everything of this one's hooks", async () => {
    const hook = await createHook({ scheme: 'github' });
    const calls: Array<[string, string, unknown]> = [
      ['POST', `/api/v1/workflow/${echoId}/hooks`, { name: 'steal', scheme: 'github' }],
      ['GET', `/api/v1/workflow/${echoId}/hooks`, undefined],
      ['GET', `/api/v1/hooks/${hook.hookId}`, undefined],
      ['PATCH', `/api/v1/hooks/${hook.hookId}`, { enabled: false }],
      ['POST', `/api/v1/hooks/${hook.hookId}/rotate-secret`, {}],
      ['DELETE', `/api/v1/hooks/${hook.hookId}`, undefined],
    ];
    for (const [method, path, body] of calls) {
      const r = await svc.request(method, path, { key: attackerKey, body });
      expect(r.status, `${method} ${path}: ${r.text}`).toBe(404);
      expect(r.text).not.toContain(hook.secret);
    }
    const intact = await answered(svc.client.GET('/api/v1/hooks/{hookId}', hookPath(hook.hookId)), 200);
    expect(intact.enabled).toBe(true);
    const body = JSON.stringify({ title: 'still mine' });
    expect((await deliver(svc, hook.hookId, body, sign.github(hook.secret, body))).status).toBe(202);
  });
});

describe('deliveries', () => {
  it('Standard Webhooks: starts a case with source api and the hook id; the case echoes the mapped inputs', async () => {
    const hook = await createHook({ scheme: 'standard-webhooks' });
    const body = JSON.stringify({ title: 'hello', event: 'created' });
    const r = await deliver(svc, hook.hookId, body, sign.standardWebhooks(hook.secret, body));
    expect(r.status, r.text).toBe(202);
    expect(r.body).toMatchObject({ hookId: hook.hookId, status: 'RUNNING' });
    const caseId = String(r.body.caseId);
    const ended = await waitForEnd(svc, caseId);
    expect(ended).toMatchObject({ status: 'COMPLETED', source: 'api', hookId: hook.hookId });
    expect((await results(svc, caseId)).title?.value).toBe('hello');
  });

  it('refuses unsigned, wrongly signed and replayed deliveries with 401, starting nothing', async () => {
    const hook = await createHook({ scheme: 'standard-webhooks', toleranceSeconds: 60 });
    const stripeHook = await createHook({ scheme: 'stripe', toleranceSeconds: 60 });
    const before = await caseIdsOf(svc, echoId);
    const body = JSON.stringify({ title: 'forged' });
    const now = Math.floor(Date.now() / 1000);
    const refused: Array<[string, Record<string, string>]> = [
      [hook.hookId, {}],
      [hook.hookId, sign.standardWebhooks('whsec_' + Buffer.from('wrong secret').toString('base64'), body)],
      [hook.hookId, sign.standardWebhooks(hook.secret, JSON.stringify({ title: 'other body' }))],
      [hook.hookId, sign.standardWebhooks(hook.secret, body, { timestamp: now - 120 })],
      [hook.hookId, sign.standardWebhooks(hook.secret, body, { timestamp: now + 120 })],
      [stripeHook.hookId, sign.stripe(stripeHook.secret, body, now - 3600)],
      [stripeHook.hookId, sign.stripe(hook.secret, body)],
      [stripeHook.hookId, { 'stripe-signature': 'v1=abc' }],
    ];
    for (const [hookId, headers] of refused) {
      const r = await deliver(svc, hookId, body, headers);
      expect(r.status, `${JSON.stringify(headers)}: ${r.text}`).toBe(401);
      expect(r.body.errorCode).toBe('UNAUTHORIZED');
    }
    expect(await caseIdsOf(svc, echoId)).toEqual(before);
  });

  it('GitHub: maps body fields and a header; a redelivery with the same X-GitHub-Delivery answers the first answer', async () => {
    const hook = await createHook({
      scheme: 'github',
      mapping: { title: { body: '/pull_request/title' }, event: { header: 'X-GitHub-Event' } },
    });
    const body = JSON.stringify({ action: 'opened', pull_request: { title: 'Fix the thing', number: 7 } });
    const headers = sign.github(hook.secret, body, randomUUID(), 'pull_request');
    const first = await deliver(svc, hook.hookId, body, headers);
    expect(first.status, first.text).toBe(202);
    const again = await deliver(svc, hook.hookId, body, headers);
    expect(again.status).toBe(202);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    const caseId = String(first.body.caseId);
    await waitForEnd(svc, caseId);
    const out = await results(svc, caseId);
    expect([out.title?.value, out.event?.value]).toEqual(['Fix the thing', 'pull_request']);
    // The same delivery id with another body is not a redelivery.
    const other = JSON.stringify({ pull_request: { title: 'changed' } });
    const clash = await deliver(svc, hook.hookId, other, {
      ...sign.github(hook.secret, other),
      'x-github-delivery': headers['x-github-delivery'],
    });
    expect(clash.status, clash.text).toBe(409);
    expect((await caseIdsOf(svc, echoId)).filter((id) => id === caseId)).toHaveLength(1);
  });

  it('Stripe and generic HMAC: verified; Idempotency-Key dedupes; two identical deliveries at once start one case', async () => {
    const stripeHook = await createHook({ scheme: 'stripe', mapping: { title: { body: '/data/object/id' } } });
    const event = JSON.stringify({ id: 'evt_1', type: 'charge.succeeded', data: { object: { id: 'ch_42' } } });
    const s = await deliver(svc, stripeHook.hookId, event, sign.stripe(stripeHook.secret, event));
    expect(s.status, s.text).toBe(202);
    expect((await waitForEnd(svc, String(s.body.caseId))).status).toBe('COMPLETED');
    expect((await results(svc, String(s.body.caseId))).title?.value).toBe('ch_42');

    const hmacHook = await createHook({ scheme: 'hmac-sha256', signatureHeader: 'X-Signature' });
    const body = JSON.stringify({ title: `race-${randomUUID()}` });
    const headers = { ...sign.hmac('x-signature', hmacHook.secret, body), 'idempotency-key': randomUUID() };
    const before = new Set(await caseIdsOf(svc, echoId));
    const answers = await Promise.all([1, 2, 3].map(() => deliver(svc, hmacHook.hookId, body, headers)));
    for (const answer of answers) expect(answer.status, answer.text).toBe(202);
    expect(new Set(answers.map((a) => a.body.caseId)).size).toBe(1);
    const started = (await caseIdsOf(svc, echoId)).filter((id) => !before.has(id));
    expect(started).toEqual([answers[0]?.body.caseId]);
    // Without a delivery id every delivery starts a case.
    const plain = sign.hmac('x-signature', hmacHook.secret, body);
    const [a, b] = [await deliver(svc, hmacHook.hookId, body, plain), await deliver(svc, hmacHook.hookId, body, plain)];
    expect(a.body.caseId).not.toBe(b.body.caseId);
    const bad = await deliver(svc, hmacHook.hookId, body, { 'x-signature': 'sha256=' + '0'.repeat(64) });
    expect(bad.status).toBe(401);
  });

  it('answers 400 naming the inputs a delivery does not map to, and 400 for a body that is not JSON', async () => {
    const hook = await createHook({ scheme: 'github', mapping: { title: { body: '/issue/title' } } });
    const before = await caseIdsOf(svc, echoId);
    const body = JSON.stringify({ issue: { number: 3 } });
    const r = await deliver(svc, hook.hookId, body, sign.github(hook.secret, body));
    expect(r.status, r.text).toBe(400);
    expect(r.body.metadata).toEqual({
      fields: [{ field: 'inputs.title', message: 'is required (mapped from body /issue/title)' }],
    });
    const wrongType = JSON.stringify({ issue: { title: 12 } });
    const t = await deliver(svc, hook.hookId, wrongType, sign.github(hook.secret, wrongType));
    expect(t.status).toBe(400);
    expect(String(t.body.message)).toContain('inputs.title');
    const unmapped = await createHook({ scheme: 'github' });
    const extra = JSON.stringify({ title: 'x', surprise: true });
    const u = await deliver(svc, unmapped.hookId, extra, sign.github(unmapped.secret, extra));
    expect(u.status).toBe(400);
    expect(JSON.stringify(u.body.metadata)).toContain('inputs.surprise');
    const notJson = 'title=x';
    const n = await deliver(svc, hook.hookId, notJson, sign.github(hook.secret, notJson));
    expect(n.status).toBe(400);
    expect(n.body.errorCode).toBe('MALFORMED_JSON');
    expect(await caseIdsOf(svc, echoId)).toEqual(before);
  });

  it('sync mode answers the results when the case ends within the bound, else 202 with the caseId', async () => {
    const hook = await createHook({ scheme: 'github', mode: 'sync', syncTimeoutMs: 20_000 });
    const body = JSON.stringify({ title: 'sync' });
    const r = await deliver(svc, hook.hookId, body, sign.github(hook.secret, body));
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ status: 'COMPLETED', hookId: hook.hookId, results: { title: { value: 'sync' } } });

    const slow = (await createWorkflow(svc, sleeper(5), 'slow')).workflowId;
    const slowHook = await createHook({ scheme: 'github', mode: 'sync', syncTimeoutMs: 1000 }, slow);
    const slowBody = JSON.stringify({ text: 'late' });
    const late = await deliver(svc, slowHook.hookId, slowBody, sign.github(slowHook.secret, slowBody));
    const answeredAt = Date.now();
    expect(late.status, late.text).toBe(202);
    // Answered at the bound, before the case ended (which it still does).
    const end = await waitForEnd(svc, String(late.body.caseId));
    expect(end.status).toBe('COMPLETED');
    expect(Date.parse(String(end.finishedAt))).toBeGreaterThan(answeredAt);
  });

  it('rotation keeps the old secret valid for the grace period only', async () => {
    const hook = await createHook({ scheme: 'github' });
    const body = JSON.stringify({ title: 'rotating' });
    const rotate = (graceSeconds: number) =>
      answered(
        svc.client.POST('/api/v1/hooks/{hookId}/rotate-secret', { ...hookPath(hook.hookId), body: { graceSeconds } }),
        200,
      );
    const rotated = await rotate(3600);
    const secret = rotated.secret;
    expect(secret).not.toBe(hook.secret);
    expect(Date.parse(String(rotated.previousSecretValidUntil))).toBeGreaterThan(Date.now() + 3500_000);
    expect((await deliver(svc, hook.hookId, body, sign.github(hook.secret, body))).status).toBe(202);
    expect((await deliver(svc, hook.hookId, body, sign.github(secret, body))).status).toBe(202);
    // No grace: the secret just replaced stops verifying at once.
    const again = await rotate(0);
    expect(again.previousSecretValidUntil).toBeNull();
    expect((await deliver(svc, hook.hookId, body, sign.github(secret, body))).status).toBe(401);
    expect((await deliver(svc, hook.hookId, body, sign.github(hook.secret, body))).status).toBe(401);
    expect((await deliver(svc, hook.hookId, body, sign.github(again.secret, body))).status).toBe(202);
  });

  it('acts for the key that last rotated its secret: once that key is revoked, deliveries are 403', async () => {
    const hook = await createHook({ scheme: 'github' });
    const rotator = await newKey(svc, ['workflow:full', 'case:full']);
    const rotate = (client: ReturnType<typeof clientFor>) =>
      answered(
        client.POST('/api/v1/hooks/{hookId}/rotate-secret', { ...hookPath(hook.hookId), body: { graceSeconds: 0 } }),
        200,
      );
    const { secret } = await rotate(clientFor(svc, rotator.key));
    const body = JSON.stringify({ title: 'held by the rotator' });
    expect((await deliver(svc, hook.hookId, body, sign.github(secret, body))).status).toBe(202);
    const revoked = await svc.admin('POST', `/admin/keys/${parseKey(rotator.key)?.id}/revoke`);
    expect(revoked.status, revoked.text).toBeLessThan(300);
    // The secret its holder kept after leaving starts nothing, though the hook's creator is still good.
    const refusedDelivery = await deliver(svc, hook.hookId, body, sign.github(secret, body));
    expect(refusedDelivery.status, refusedDelivery.text).toBe(403);
    const ours = await rotate(svc.client);
    expect((await deliver(svc, hook.hookId, body, sign.github(ours.secret, body))).status).toBe(202);
  });

  it('acts for the key that last reshaped it (not one that renamed it): once that key is revoked, deliveries are 403', async () => {
    const hook = await createHook({ scheme: 'github' });
    const keys = {
      shaper: await newKey(svc, ['workflow:full', 'case:full']),
      renamer: await newKey(svc, ['workflow:full']),
    };
    const path = hookPath(hook.hookId);
    const shaper = clientFor(svc, keys.shaper.key);
    await answered(shaper.PATCH('/api/v1/hooks/{hookId}', { ...path, body: { toleranceSeconds: 600 } }), 200);
    const renamer = clientFor(svc, keys.renamer.key);
    await answered(renamer.PATCH('/api/v1/hooks/{hookId}', { ...path, body: { name: 'renamed' } }), 200);
    const body = JSON.stringify({ title: 'shaped' });
    expect((await deliver(svc, hook.hookId, body, sign.github(hook.secret, body))).status).toBe(202);
    // Revoking the renamer changes nothing; revoking the key that set the tolerance stops the deliveries.
    for (const key of [keys.renamer, keys.shaper]) {
      const revoked = await svc.admin('POST', `/admin/keys/${parseKey(key.key)?.id}/revoke`);
      expect(revoked.status, revoked.text).toBeLessThan(300);
    }
    const refused = await deliver(svc, hook.hookId, body, sign.github(hook.secret, body));
    expect(refused.status, refused.text).toBe(403);
  });

  it('a disabled or deleted hook answers 404 and starts nothing; enabling it again works', async () => {
    const hook = await createHook({ scheme: 'github' });
    const body = JSON.stringify({ title: 'off' });
    const before = await caseIdsOf(svc, echoId);
    const enable = (enabled: boolean) =>
      answered(svc.client.PATCH('/api/v1/hooks/{hookId}', { ...hookPath(hook.hookId), body: { enabled } }), 200);
    await enable(false);
    expect((await deliver(svc, hook.hookId, body, sign.github(hook.secret, body))).status).toBe(404);
    expect(await caseIdsOf(svc, echoId)).toEqual(before);
    await enable(true);
    expect((await deliver(svc, hook.hookId, body, sign.github(hook.secret, body))).status).toBe(202);
    await answeredEmpty(svc.client.DELETE('/api/v1/hooks/{hookId}', hookPath(hook.hookId)), 204);
    expect((await deliver(svc, hook.hookId, body, sign.github(hook.secret, body))).status).toBe(404);
    await refused(svc.client.GET('/api/v1/hooks/{hookId}', hookPath(hook.hookId)), 404);
    expect((await deliver(svc, randomUUID(), body, {})).status).toBe(404);
  });

  it('limits deliveries per hook with the RateLimit headers, and bodies to hooks.maxPayloadBytes', async () => {
    const hook = await createHook({ scheme: 'github', rateLimitPerMinute: 2 });
    const body = JSON.stringify({ title: 'limited' });
    const sent: TestResponse[] = [];
    for (let i = 0; i < 3; i++) sent.push(await deliver(svc, hook.hookId, body, sign.github(hook.secret, body)));
    expect(sent.map((r) => r.status)).toEqual([202, 202, 429]);
    expect(sent[0]?.headers.get('ratelimit-policy')).toBe('"hook";q=2;w=60');
    expect(sent[1]?.headers.get('ratelimit')).toMatch(/^"hook";r=0;t=\d+$/);
    expect(Number(sent[2]?.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another hook has its own budget.
    const big = await createHook({ scheme: 'github' });
    const large = JSON.stringify({ title: 'x'.repeat(5000) });
    const r = await deliver(svc, big.hookId, large, sign.github(big.secret, large));
    expect(r.status, r.text).toBe(413);
  });
});
