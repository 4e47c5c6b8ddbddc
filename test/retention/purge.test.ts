import { statSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { retentionScheduleId, type RetentionRunResult } from '../../src/temporal/contracts/retention-purge.js';
import { answered, answeredEmpty, refused, startTestService, type TestService } from '../support/harness.js';
import { clientFor, newCaller, newKey } from '../support/keys.js';
import { Receiver } from '../callbacks/receiver.js';
import { createWorkflow, startCase, waitForEnd } from '../cases/support.js';
import { Graph, sleeper } from '../support/graphs.js';

let svc: TestService;
let echo: { workflowId: string; entityId: string; workflowVersionId: string };
const DAY_MS = 86_400_000;

beforeAll(async () => {
  svc = await startTestService({ config: { retention: { batchSize: 2000, intervalMinutes: 60 } } });
  const g = new Graph();
  const input = g.input([{ name: 'text' }]);
  const output = g.output([{ name: 'text' }]);
  g.edge(input, output);
  echo = await createWorkflow(svc, g, 'echo');
}, 120_000);
afterAll(async () => {
  await svc?.stop();
});

/** Inserts `count` ended cases straight into the store, each with one node record, ended `daysAgo` days ago. */
async function insertOldCases(count: number, daysAgo: number, status: 'COMPLETED' | 'FAILED'): Promise<string[]> {
  const { db } = svc.service.context.store;
  const finished = new Date(Date.now() - daysAgo * DAY_MS).toISOString();
  const ids: string[] = [];
  const payload = JSON.stringify({ text: { value: 'x'.repeat(400), type: 'str', displayName: 'text' } });
  for (let done = 0; done < count; done += 500) {
    const chunk = Array.from({ length: Math.min(500, count - done) }, () => randomUUID());
    ids.push(...chunk);
    await db.transaction().execute(async (trx) => {
      await trx
        .insertInto('cases')
        .values(
          chunk.map((id) => ({
            id,
            organization_id: svc.organizationId,
            workspace_id: svc.workspaceId,
            workflow_id: echo.workflowId,
            entity_id: echo.entityId,
            workflow_version_id: echo.workflowVersionId,
            workflow_version_number: 1,
            title: null,
            description: null,
            ref_user_id: null,
            source: 'api',
            web_app_id: null,
            workspaces: null,
            initial_input: '{}',
            inputs: '{}',
            callback_url: null,
            status,
            error: null,
            results: payload,
            deadline_ms: 60_000,
            temporal_workflow_id: `case-${id}`,
            temporal_run_id: null,
            created_by_key_id: 'bulk',
            created_by_user_id: svc.userId,
            created_at: finished,
            started_at: finished,
            finished_at: finished,
          })),
        )
        .execute();
      await trx
        .insertInto('case_nodes')
        .values(
          chunk.map((id) => ({
            case_id: id,
            node_id: 'output',
            seq: 0,
            status: 'completed',
            handler_class: 'output',
            inputs: payload,
            outputs: payload,
            logs: '[]',
            error: null,
            attempts: 1,
            usage: null,
            started_at: finished,
            finished_at: finished,
            clock: null,
          })),
        )
        .execute();
    });
  }
  return ids;
}

async function countCases(ids: string[]): Promise<number> {
  const { db } = svc.service.context.store;
  const row = await db
    .selectFrom('cases')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('id', 'in', ids)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Cases of the organization that ended more than `days` days ago. */
async function countEndedBefore(days: number): Promise<number> {
  const { db } = svc.service.context.store;
  const row = await db
    .selectFrom('cases')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('organization_id', '=', svc.organizationId)
    .where('finished_at', '<', new Date(Date.now() - days * DAY_MS).toISOString())
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The database file's size on disk after the WAL is folded back in. */
async function databaseBytes(): Promise<number> {
  const { store } = svc.service.context;
  await sql`pragma wal_checkpoint(TRUNCATE)`.execute(store.db);
  return statSync(store.location).size;
}

describe('erasing a case', () => {
  it('refuses a running case (409), hides it from another organization (404), erases an ended one', async () => {
    const slow = (await createWorkflow(svc, sleeper(20), 'slow')).workflowId;
    const running = await startCase(svc, slow, { text: 'x' });
    const onCase = (caseId: string) => ({ params: { path: { caseId } } });
    const erase = (caseId: string, client = svc.client) => client.DELETE('/api/v1/case/{caseId}', onCase(caseId));
    expect(await refused(erase(running), 409)).toMatchObject({ errorCode: 'CONFLICT', statusCode: 409 });
    await answered(svc.client.POST('/api/v1/case/{caseId}/cancel', onCase(running)), 200);

    const hook = new Receiver();
    await hook.listen();
    const ended = await startCase(svc, echo.workflowId, { text: 'bye' }, { callbackUrl: hook.url });
    await waitForEnd(svc, ended);
    await expect.poll(() => hook.received.length, { timeout: 15_000 }).toBe(1);
    await hook.close();

    const attacker = clientFor(svc, (await newCaller(svc, ['case:full'])).key);
    await refused(erase(ended, attacker), 404);
    const reader = clientFor(svc, (await newKey(svc, ['case:read'])).key);
    await refused(erase(ended, reader), 403);
    await answered(svc.client.GET('/api/v1/case/{caseId}/status', onCase(ended)), 200);

    await answeredEmpty(erase(ended), 204);
    await refused(svc.client.GET('/api/v1/case/{caseId}/status', onCase(ended)), 404);
    await refused(svc.client.GET('/api/v1/case/{caseId}/callbacks', onCase(ended)), 404);
    const { db } = svc.service.context.store;
    expect(await db.selectFrom('case_nodes').select('case_id').where('case_id', '=', ended).execute()).toEqual([]);
    expect(await db.selectFrom('callback_deliveries').select('id').where('case_id', '=', ended).execute()).toEqual([]);
    await refused(erase(ended), 404);
  }, 60_000);
});

describe('the retention schedule', () => {
  it('purges 50,000 old cases in batches while new cases run, and the database file shrinks', async () => {
    await insertOldCases(48_000, 100, 'COMPLETED');
    await insertOldCases(2_000, 100, 'FAILED');
    expect(await countEndedBefore(90)).toBe(50_000);
    const recentFailed = await insertOldCases(10, 10, 'FAILED');
    const before = await databaseBytes();
    // The inserts above held this process's event loop (the in-process service's too) for seconds, so the
    // server's keep-alive timers are overdue: let them close the idle sockets before the next request
    // would reuse one of them (ECONNRESET).
    await new Promise((resolve) => setTimeout(resolve, 100));

    const policy = await svc.admin('PUT', `/admin/organizations/${svc.organizationId}/retention`, {
      keepDays: 30,
      keepFailedDays: 60,
    });
    expect(policy.status, policy.text).toBe(200);
    expect(policy.body).toMatchObject({ keepDays: 30, keepFailedDays: 60, source: 'organization' });

    const { client } = svc.service.context.temporal;
    const schedule = client.schedule.getHandle(retentionScheduleId(svc.taskQueue));
    await schedule.trigger();
    // New cases run meanwhile and end normally.
    const fresh = await Promise.all([1, 2, 3, 4, 5].map((i) => startCase(svc, echo.workflowId, { text: `new ${i}` })));
    for (const caseId of fresh) expect((await waitForEnd(svc, caseId, 90_000)).status).toBe('COMPLETED');

    let workflowId: string | undefined;
    await expect
      .poll(
        async () => {
          const action = (await schedule.describe()).info.recentActions.at(-1)?.action;
          workflowId = action?.workflow.workflowId;
          return workflowId;
        },
        { timeout: 15_000 },
      )
      .toBeDefined();
    const result = (await client.workflow.getHandle(workflowId!).result()) as RetentionRunResult;
    expect(result.casesErased).toBe(50_000);
    expect(result.rowsDeleted).toBe(100_000);
    expect(result.bytesReclaimed).toBeGreaterThan(0);

    expect(await countEndedBefore(90)).toBe(0);
    expect(await countCases(recentFailed)).toBe(10);
    expect(await countCases(fresh)).toBe(5);
    const after = await databaseBytes();
    expect(after).toBeLessThan(before / 2);

    // Polled: a keep-alive socket the server closed while the purge ran may reset the first request.
    const scrape = () => fetch(`${svc.url}/metrics`).then((r) => r.text());
    await expect.poll(scrape).toMatch(/caseflow_retention_cases_erased_total\{reason="retention"\} 50000/);
    await expect.poll(scrape).toMatch(/caseflow_retention_last_run_timestamp_seconds \d/);
  }, 300_000);
});
