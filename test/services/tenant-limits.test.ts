import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CaseflowClient } from '../../src/client/index.js';
import { answered, refused, startTestService, type TestService } from '../support/harness.js';
import { clientFor, newCaller } from '../support/keys.js';
import { Graph } from '../support/graphs.js';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres.js';

/**
 * Count limits a tenant cannot flood past (docs/security.md): schedules, hooks and event
 * subscriptions per workspace, bulk reruns running per organization. Over a limit: 409 in the error
 * shape with metadata.limit naming the setting; concurrent creations count one after another; another
 * organization's workspace is not held back by this one's; a deletion frees a place. The cron check
 * against schedules.minIntervalSeconds is played here too, through the API.
 */
const MAX = 2;
let svc: TestService;
/** A tenant of its own: its organization and workspace, its key's client, a workflow input(text) → output(text). */
interface Tenant {
  workspaceId: string;
  client: CaseflowClient;
  workflowId: string;
}
let first: Tenant;
let second: Tenant;

async function tenant(on = svc): Promise<Tenant> {
  const caller = await newCaller(on, ['case:full', 'workflow:full']);
  const client = clientFor(on, caller.key);
  const g = new Graph();
  g.edge(g.input([{ name: 'text' }]), g.output([{ name: 'text' }]));
  const { workflowId } = await answered(
    client.POST('/api/v1/workflow', {
      params: { header: { 'x-workspace-id': caller.workspaceId } },
      body: { name: 'limits', activeStatus: 'active', nodes: g.nodes, edges: g.edges },
    }),
    201,
  );
  return { workspaceId: caller.workspaceId, client, workflowId };
}

beforeAll(async () => {
  svc = await startTestService({
    config: {
      schedules: { minIntervalSeconds: 300, maxPerWorkspace: MAX },
      hooks: { maxPerWorkspace: MAX },
      events: { maxSubscriptionsPerWorkspace: MAX },
      cases: { maxRunningRerunBatches: 1, rerunBatchPerSecond: 1 },
    },
  });
  [first, second] = await Promise.all([tenant(), tenant()]);
});
afterAll(async () => {
  await svc?.stop();
});

/** What `MAX + 3` creations sent at once came to: the statuses, and one refusal's body. */
async function flood(create: () => Promise<{ response: Response; error?: unknown }>) {
  const answers = await Promise.all(Array.from({ length: MAX + 3 }, create));
  const statuses = answers.map((a) => a.response.status).sort();
  return { statuses, refusal: answers.find((a) => a.response.status === 409)?.error };
}

const every5Minutes = { cron: '*/5 * * * *', timeZone: 'UTC', inputs: { text: 'x' } };

const subscribe = (t: Tenant) => () =>
  t.client.POST('/api/v1/subscriptions', {
    body: { workspaceId: t.workspaceId, url: 'http://127.0.0.1:9/events', eventTypes: ['case.failed'] },
  });

describe('count limits per workspace', () => {
  it(`schedules: ${MAX} per workspace, a flood included; another organization unaffected; a deletion frees one`, async () => {
    const create = (t: Tenant) => () =>
      t.client.POST('/api/v1/workflow/{workflowId}/schedules', {
        params: { path: { workflowId: t.workflowId } },
        body: { ...every5Minutes, paused: true },
      });
    const { statuses, refusal } = await flood(create(first));
    expect(statuses).toEqual([...Array(MAX).fill(201), ...Array(3).fill(409)]);
    expect(refusal).toMatchObject({
      statusCode: 409,
      errorCode: 'CONFLICT',
      metadata: { limit: { setting: 'schedules.maxPerWorkspace', max: MAX } },
    });
    expect((await create(second)()).response.status).toBe(201);
    const list = await answered(first.client.GET('/api/v1/schedules', { params: { query: { limit: 100 } } }), 200);
    expect(list.items).toHaveLength(MAX);
    const scheduleId = list.items[0]?.scheduleId ?? '';
    const gone = await first.client.DELETE('/api/v1/schedules/{scheduleId}', { params: { path: { scheduleId } } });
    expect(gone.response.status).toBe(204);
    expect((await create(first)()).response.status).toBe(201);
  });

  it(`hooks: ${MAX} per workspace, a flood included; another organization unaffected`, async () => {
    const create = (t: Tenant) => () =>
      t.client.POST('/api/v1/workflow/{workflowId}/hooks', {
        params: { path: { workflowId: t.workflowId } },
        body: { name: 'flood', scheme: 'standard-webhooks' },
      });
    const { statuses, refusal } = await flood(create(first));
    expect(statuses).toEqual([...Array(MAX).fill(201), ...Array(3).fill(409)]);
    expect(refusal).toMatchObject({ metadata: { limit: { setting: 'hooks.maxPerWorkspace', max: MAX } } });
    expect((await create(second)()).response.status).toBe(201);
  });

  it(`event subscriptions: ${MAX} per workspace, a flood included; another organization unaffected`, async () => {
    const { statuses, refusal } = await flood(subscribe(first));
    expect(statuses).toEqual([...Array(MAX).fill(201), ...Array(3).fill(409)]);
    expect(refusal).toMatchObject({
      metadata: { limit: { setting: 'events.maxSubscriptionsPerWorkspace', max: MAX } },
    });
    expect((await subscribe(second)()).response.status).toBe(201);
  });
});

describe('bulk reruns running per organization', () => {
  it('one at a time here: another is 409 until it ends; another organization starts its own', async () => {
    const cases = await Promise.all(
      [1, 2, 3, 4].map(async () => {
        const { caseId } = await answered(
          first.client.POST('/api/v1/case', { body: { workflowId: first.workflowId } }),
          201,
        );
        await answered(
          first.client.POST('/api/v1/case/{caseId}/execute', {
            params: { path: { caseId } },
            body: { inputs: { text: 'x' } },
          }),
          202,
        );
        return caseId;
      }),
    );
    for (const caseId of cases) {
      const until = Date.now() + 30_000;
      while (
        (await answered(first.client.GET('/api/v1/case/{caseId}/status', { params: { path: { caseId } } }), 200))
          .status !== 'COMPLETED'
      ) {
        if (Date.now() > until) throw new Error(`case ${caseId} did not complete`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    // One rerun a second: the batch runs for seconds.
    const rerun = (t: Tenant) =>
      t.client.POST('/api/v1/case/rerun', { body: { filter: { workflowId: t.workflowId }, from: 'start' } });
    const running = await answered(rerun(first), 202);
    const again = await refused(rerun(first), 409);
    expect(again).toMatchObject({ metadata: { limit: { setting: 'cases.maxRunningRerunBatches', max: 1 } } });
    expect((await rerun(second)).response.status).toBe(202);
    const cancelled = await answered(
      first.client.POST('/api/v1/case/rerun/{batchId}/cancel', { params: { path: { batchId: running.batchId } } }),
      200,
    );
    expect(cancelled.status).toBe('CANCELLED');
    expect((await rerun(first)).response.status).toBe(202);
  });
});

describe('a cron firing more often than schedules.minIntervalSeconds', () => {
  it('is refused with 400 naming body.cron, on create and on update; nothing is created', async () => {
    const t = await tenant();
    for (const cron of ['* * * * *', '0,1 9 * * *', '0,59 0,23 * * *']) {
      const r = await refused(
        t.client.POST('/api/v1/workflow/{workflowId}/schedules', {
          params: { path: { workflowId: t.workflowId } },
          body: { ...every5Minutes, cron },
        }),
        400,
      );
      expect(r).toMatchObject({ errorCode: 'VALIDATION_ERROR', metadata: { fields: [{ field: 'body.cron' }] } });
      expect(r.message).toContain('schedules.minIntervalSeconds');
    }
    const list = await answered(t.client.GET('/api/v1/schedules', { params: { query: { limit: 100 } } }), 200);
    expect(list.items).toEqual([]);
    const created = await answered(
      t.client.POST('/api/v1/workflow/{workflowId}/schedules', {
        params: { path: { workflowId: t.workflowId } },
        body: { ...every5Minutes, paused: true },
      }),
      201,
    );
    const patched = await refused(
      t.client.PATCH('/api/v1/schedules/{scheduleId}', {
        params: { path: { scheduleId: created.scheduleId } },
        body: { cron: '*/2 * * * *' },
      }),
      400,
    );
    expect(patched).toMatchObject({ metadata: { fields: [{ field: 'body.cron' }] } });
  });
});

describe('count limits on Postgres', () => {
  let schema: PostgresSchema;
  let pgService: TestService;
  beforeAll(async () => {
    schema = await createPostgresSchema();
    pgService = await startTestService({
      databaseUrl: schema.url,
      config: { events: { maxSubscriptionsPerWorkspace: MAX } },
    });
  });
  afterAll(async () => {
    await pgService?.stop();
    await schema?.drop();
  });

  it('a flood of creations in one workspace counts one after another (the workspace row locked)', async () => {
    const { statuses } = await flood(subscribe(await tenant(pgService)));
    expect(statuses).toEqual([...Array(MAX).fill(201), ...Array(3).fill(409)]);
  });
});
