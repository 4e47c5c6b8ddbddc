import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answered, startTestService, type TestService } from '../support/harness.js';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres.js';
import { createWorkflow } from '../cases/support.js';
import { Graph, py, textChain } from '../support/graphs.js';
import { createSchedule, deleteSchedule, ended, trigger, waitForSchedule } from './support.js';

describe('schedules on Postgres', () => {
  let schema: PostgresSchema;
  let svc: TestService;
  beforeAll(async () => {
    schema = await createPostgresSchema();
    svc = await startTestService({ databaseUrl: schema.url, config: { schedules: { minIntervalSeconds: 1 } } });
  });
  afterAll(async () => {
    await svc?.stop();
    await schema?.drop();
  });

  it('fires, records started and failed firings with the case status, pages, changes and deletes', async () => {
    const wf = await createWorkflow(svc, textChain('Echo', py('return {"text": inputs["text"]}')));
    const s = await createSchedule(svc, wf.workflowId, {
      intervalSeconds: 2,
      inputs: { text: 'pg' },
      catchupWindowSeconds: 604800,
    });
    const fired = await waitForSchedule(svc, s.scheduleId, (x) => x.recentFirings.some(ended));
    expect(fired.recentFirings.find(ended)).toMatchObject({ status: 'started', caseStatus: 'COMPLETED' });
    expect(fired.catchupWindowSeconds).toBe(604800);
    const path = { scheduleId: s.scheduleId };
    await answered(svc.client.POST('/api/v1/schedules/{scheduleId}/pause', { params: { path } }), 200);
    // A new active version the schedule's inputs do not satisfy: the next firing fails, recorded.
    const g = new Graph();
    g.edge(g.input([{ name: 'n', type: 'int' }]), g.output([{ name: 'n', type: 'int' }]));
    await answered(
      svc.client.PATCH('/api/v1/workflow/{workflowId}', {
        params: { path: { workflowId: wf.workflowId } },
        body: { nodes: g.nodes, edges: g.edges },
      }),
      200,
    );
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await trigger(svc, s.scheduleId);
    const failed = await waitForSchedule(svc, s.scheduleId, (x) => x.recentFirings[0]?.status === 'failed');
    expect(failed.recentFirings[0]?.error).toContain('body.inputs.n');
    const patched = await answered(
      svc.client.PATCH('/api/v1/schedules/{scheduleId}', {
        params: { path },
        body: { cron: '15 6 * * 1', timeZone: 'America/New_York', inputs: { n: 3 } },
      }),
      200,
    );
    expect(patched).toMatchObject({ cron: '15 6 * * 1', inputs: { n: 3 }, paused: true });
    const list = (query: { limit?: number }) =>
      answered(svc.client.GET('/api/v1/schedules', { params: { query } }), 200);
    expect((await list({ limit: 1 })).items.map((x) => x.scheduleId)).toEqual([s.scheduleId]);
    expect(await deleteSchedule(svc, s.scheduleId)).toBe(204);
    expect((await list({})).items).toEqual([]);
  });
});
