import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answered, refused, startTestService, type TestService } from '../support/harness.js';
import { generate } from '../generation/process-support.js';

const DAY_MS = 86_400_000;

describe('retention purges generation runs', () => {
  let svc: TestService;

  beforeAll(async () => {
    svc = await startTestService({ config: { retention: { batchSize: 50, intervalMinutes: 60 } } });
  }, 120_000);
  afterAll(async () => {
    await svc?.stop();
  });

  const runIds = async (): Promise<string[]> => {
    const { db } = svc.service.context.store;
    const rows = await db
      .selectFrom('generation_runs')
      .select('id')
      .where('organization_id', '=', svc.organizationId)
      .execute();
    return rows.map((r) => r.id).sort();
  };
  const age = (id: string, days: number) =>
    svc.service.context.store.db
      .updateTable('generation_runs')
      .set({ started_at: new Date(Date.now() - days * DAY_MS).toISOString() })
      .where('id', '=', id)
      .execute();

  it('erases runs older than the policy, keeps recent ones and failed ones within their longer period', async () => {
    const prompt = 'Given a text, count the words and then uppercase it';
    const old = await generate(svc, { prompt });
    const oldFailed = await generate(svc, { prompt });
    const recent = await generate(svc, { prompt });
    for (const made of [old, oldFailed, recent]) expect(made.run.status).toBe('completed');
    const [oldId, failedId, recentId] = await Promise.all(
      [old, oldFailed, recent].map(async ({ workflowId }) => {
        const res = await answered(
          svc.client.GET('/api/v1/workflow/{workflowId}/run', { params: { path: { workflowId } } }),
          200,
        );
        return res.run_id;
      }),
    );
    await age(oldId!, 40);
    await age(failedId!, 40);
    await svc.service.context.store.db
      .updateTable('generation_runs')
      .set({ status: 'failed' })
      .where('id', '=', failedId!)
      .execute();
    expect(await runIds()).toEqual([oldId, failedId, recentId].sort());

    // No policy (the defaults keep everything): nothing goes.
    const { retention } = svc.service.context.services;
    expect(await retention.purgeBatch()).toMatchObject({ cases: 0, generationRuns: 0, more: false });

    const set = await svc.admin('PUT', `/admin/organizations/${svc.organizationId}/retention`, {
      keepDays: 30,
      keepFailedDays: 60,
    });
    expect(set.status, set.text).toBe(200);
    expect(await retention.purgeBatch()).toMatchObject({ generationRuns: 1, rows: 1, more: false });
    expect(await runIds()).toEqual([failedId, recentId].sort());
    const run = (workflowId: string, runId: string) =>
      svc.client.GET('/api/v1/workflow/{workflowId}/run', { params: { path: { workflowId }, query: { runId } } });
    await refused(run(old.workflowId, String(oldId)), 404);
    await answered(run(recent.workflowId, String(recentId)), 200);

    // Past the failed period too: the failed run goes, the recent one stays.
    await age(failedId!, 70);
    expect(await retention.purgeBatch()).toMatchObject({ generationRuns: 1 });
    expect(await runIds()).toEqual([recentId]);
  }, 120_000);
});
