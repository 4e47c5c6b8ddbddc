import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseKey } from '../../src/auth/api-keys.js';
import { createRepositories } from '../../src/store/repositories.js';
import { startTestService, type TestService } from '../support/harness.js';
import { newKey } from '../support/keys.js';
import { Graph } from '../support/graphs.js';
import { createWorkflow } from './support.js';
import { createSchedule, waitForSchedule } from '../schedules/support.js';
import { caseIdsOf, deliver, sign } from '../hooks/support.js';

/**
 * Schedules and hooks start cases later, without a request: as their creator's key. A key revoked
 * since, or whose user left the organization, no longer starts anything through them (as a bulk
 * rerun stops, docs/cases.md), or a revoked member would keep the organization's compute running.
 */
let svc: TestService;
let workflowId: string;
beforeAll(async () => {
  svc = await startTestService();
  const g = new Graph();
  const fields = [{ name: 'text' }];
  g.edge(g.input(fields), g.output(fields));
  workflowId = (await createWorkflow(svc, g, 'acting creator')).workflowId;
});
afterAll(async () => {
  await svc?.stop();
});

/** A member's key that may create schedules and hooks, and how to take it away. */
async function creator(): Promise<{
  key: string;
  keyId: string | undefined;
  revoke: () => Promise<void>;
  leave: () => Promise<void>;
}> {
  const { key, userId } = await newKey(svc, ['workflow:full', 'case:full']);
  const keyId = parseKey(key)?.id;
  return {
    key,
    keyId,
    revoke: async () => expect((await svc.admin('POST', `/admin/keys/${keyId}/revoke`)).status).toBeLessThan(300),
    leave: async () =>
      expect((await svc.admin('DELETE', `/admin/organizations/${svc.organizationId}/members/${userId}`)).status).toBe(
        204,
      ),
  };
}

async function firingAfter(takeAway: 'revoke' | 'leave'): Promise<void> {
  const who = await creator();
  const created = await createSchedule(svc, workflowId, { cron: '0 0 1 1 *', inputs: { text: 'x' } });
  const mine = await svc.request('POST', `/api/v1/workflow/${workflowId}/schedules`, {
    key: who.key,
    body: { cron: '0 0 1 1 *', inputs: { text: 'x' } },
  });
  expect(mine.status, mine.text).toBe(201);
  await who[takeAway]();
  // Fired by the organization's own key: the firing still acts as the schedule's creator.
  for (const id of [created.scheduleId, String(mine.body.scheduleId)])
    expect((await svc.request('POST', `/api/v1/schedules/${id}/trigger`)).status).toBe(202);
  const control = await waitForSchedule(svc, created.scheduleId, (s) => s.recentFirings.length === 1);
  expect(control.recentFirings[0]).toMatchObject({ status: 'started' });
  const s = await waitForSchedule(svc, String(mine.body.scheduleId), (x) => x.recentFirings.length === 1);
  expect(s.recentFirings[0]).toMatchObject({ status: 'failed', caseId: null });
  expect(s.recentFirings[0]?.error).toMatch(takeAway === 'revoke' ? /revoked/ : /no longer a member/);
}

describe("a schedule whose creator's key can no longer be used", () => {
  it('creates no case when the key was revoked', { timeout: 60_000 }, () => firingAfter('revoke'));
  it('creates no case when its user left the organization', { timeout: 60_000 }, () => firingAfter('leave'));
});

/** The schedule's one firing, triggered by the organization's own key once `who` was revoked. */
async function firingAfterRevoking(scheduleId: string, who: { revoke: () => Promise<void> }) {
  await who.revoke();
  expect((await svc.request('POST', `/api/v1/schedules/${scheduleId}/trigger`)).status).toBe(202);
  const s = await waitForSchedule(svc, scheduleId, (x) => x.recentFirings.length === 1);
  return s.recentFirings[0];
}

describe('a schedule changed by another key', () => {
  it(
    'acts for the key that changed it: once that key is revoked, its firings create nothing',
    { timeout: 60_000 },
    async () => {
      const who = await creator();
      const created = await createSchedule(svc, workflowId, { cron: '0 0 1 1 *', inputs: { text: 'x' } });
      const changed = await svc.request('PATCH', `/api/v1/schedules/${created.scheduleId}`, {
        key: who.key,
        body: { inputs: { text: 'chosen by a member who then leaves' } },
      });
      expect(changed.status, changed.text).toBe(200);
      // The schedule's creator is still good; what it fires was chosen by a key that no longer is.
      const firing = await firingAfterRevoking(created.scheduleId, who);
      expect(firing).toMatchObject({ status: 'failed', caseId: null });
      expect(firing?.error).toMatch(/revoked/);
    },
  );
});

describe('a schedule only retitled or paused by another key', () => {
  it(
    'still acts for the key that set what it fires: revoking the retitling key stops nothing',
    { timeout: 60_000 },
    async () => {
      const [setter, retitler] = [await creator(), await creator()];
      const mine = await svc.request('POST', `/api/v1/workflow/${workflowId}/schedules`, {
        key: setter.key,
        body: { cron: '0 0 1 1 *', inputs: { text: 'x' } },
      });
      expect(mine.status, mine.text).toBe(201);
      const scheduleId = String(mine.body.scheduleId);
      for (const body of [{ title: 'retitled' }, { paused: true }]) {
        const changed = await svc.request('PATCH', `/api/v1/schedules/${scheduleId}`, { key: retitler.key, body });
        expect(changed.status, changed.text).toBe(200);
      }
      const firing = await firingAfterRevoking(scheduleId, retitler);
      expect(firing).toMatchObject({ status: 'started' });
      const record = await createRepositories(svc.service.context.store.db).cases.find(String(firing?.caseId));
      expect(record).toMatchObject({ title: 'retitled', createdByKeyId: setter.keyId });
    },
  );

  it(
    'acts for the key that resumed it: once that key is revoked, its firings create nothing',
    {
      timeout: 60_000,
    },
    async () => {
      const resumer = await creator();
      const created = await createSchedule(svc, workflowId, { cron: '0 0 1 1 *', inputs: { text: 'x' }, paused: true });
      const resumed = await svc.request('POST', `/api/v1/schedules/${created.scheduleId}/resume`, { key: resumer.key });
      expect(resumed.status, resumed.text).toBe(200);
      const firing = await firingAfterRevoking(created.scheduleId, resumer);
      expect(firing).toMatchObject({ status: 'failed', caseId: null });
      expect(firing?.error).toMatch(/revoked/);
    },
  );
});

describe("a hook whose creator's key can no longer be used", () => {
  it('refuses deliveries with 403 once the key is revoked, and starts nothing', async () => {
    const who = await creator();
    const hook = await svc.request('POST', `/api/v1/workflow/${workflowId}/hooks`, {
      key: who.key,
      body: { name: 'revoked creator', scheme: 'standard-webhooks' },
    });
    expect(hook.status, hook.text).toBe(201);
    const { hookId, secret } = hook.body as { hookId: string; secret: string };
    const body = JSON.stringify({ text: 'hello' });
    expect((await deliver(svc, hookId, body, sign.standardWebhooks(secret, body))).status).toBe(202);
    const before = await caseIdsOf(svc, workflowId);
    await who.revoke();
    const refused = await deliver(svc, hookId, body, sign.standardWebhooks(secret, body));
    expect(refused.status, refused.text).toBe(403);
    expect(refused.body.message).toMatch(/revoked/);
    expect(await caseIdsOf(svc, workflowId)).toEqual(before);
  });
});
