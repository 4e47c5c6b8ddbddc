import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.js';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres.js';
import { createWorkflow } from '../cases/support.js';
import { Graph, py, textChain } from '../support/graphs.js';
import { createSchedule, ended, type ScheduleBody, waitForSchedule } from './support.js';

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
    await svc.request('POST', `/api/v1/schedules/${s.scheduleId}/pause`);
    // A new active version the schedule's inputs do not satisfy: the next firing fails, recorded.
    const g = new Graph();
    g.edge(g.input([{ name: 'n', type: 'int' }]), g.output([{ name: 'n', type: 'int' }]));
    expect(
      (await svc.request('PATCH', `/api/v1/workflow/${wf.workflowId}`, { body: { nodes: g.nodes, edges: g.edges } }))
        .status,
    ).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await svc.request('POST', `/api/v1/schedules/${s.scheduleId}/trigger`);
    const failed = await waitForSchedule(svc, s.scheduleId, (x) => x.recentFirings[0]?.status === 'failed');
    expect(failed.recentFirings[0]?.error).toContain('body.inputs.n');
    const patched = await svc.request('PATCH', `/api/v1/schedules/${s.scheduleId}`, {
      body: { cron: '15 6 * * 1', timeZone: 'America/New_York', inputs: { n: 3 } },
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ cron: '15 6 * * 1', inputs: { n: 3 }, paused: true });
    const list = await svc.request('GET', '/api/v1/schedules?limit=1');
    expect((list.body.items as ScheduleBody[]).map((x) => x.scheduleId)).toEqual([s.scheduleId]);
    expect((await svc.request('DELETE', `/api/v1/schedules/${s.scheduleId}`)).status).toBe(204);
    expect((await svc.request('GET', '/api/v1/schedules')).body.items).toEqual([]);
  });
});
