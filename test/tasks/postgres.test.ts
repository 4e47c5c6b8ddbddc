import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkflow, startCase, waitForEnd } from '../cases/support.js';
import { answered, startTestService, type TestService } from '../support/harness.js';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres.js';
import { approvalGraph } from './graphs.js';
import { completeTask, listTasks } from './support.js';

describe('human tasks on Postgres', () => {
  let schema: PostgresSchema;
  let svc: TestService;
  beforeAll(async () => {
    schema = await createPostgresSchema();
    svc = await startTestService({ databaseUrl: schema.url });
  });
  afterAll(async () => {
    await svc?.stop();
    await schema?.drop();
  });

  it('opens, lists (both orders, by cursor), completes and records the history', async () => {
    const due = (hours: number) => ({
      title: 'Approve {{ amount }}',
      assignee: { type: 'role', role: 'owner' },
      due: { after_ms: hours * 3600_000 },
    });
    const cases: string[] = [];
    for (const hours of [5, 2]) {
      const { workflowId } = await createWorkflow(svc, approvalGraph(due(hours)).graph, `due in ${hours} h`);
      cases.push(await startCase(svc, workflowId, { amount: hours }));
    }
    const list = (query: Parameters<typeof listTasks>[1]) => listTasks(svc, query);
    for (const until = Date.now() + 30_000; (await list({ status: 'open' })).items.length < 2;) {
      if (Date.now() > until) throw new Error('the tasks did not open');
      await new Promise((r) => setTimeout(r, 100));
    }
    const first = await list({ sort: 'soonest_due', limit: 1 });
    const second = await list({ sort: 'soonest_due', limit: 1, cursor: String(first.nextCursor) });
    expect([...first.items, ...second.items].map((t) => t.title)).toEqual(['Approve 2', 'Approve 5']);
    const newest = (await list({ sort: 'newest' })).items.map((t) => t.createdAt);
    expect(newest).toHaveLength(2);
    expect([...newest].sort().reverse()).toEqual(newest);
    expect((await list({ assignee: 'me' })).items).toHaveLength(2);

    const taskId = String(first.items[0]?.taskId);
    const done = await answered(completeTask(svc, taskId, { approved: true }), 200);
    expect(done.history.map((h) => h.action)).toEqual(['opened', 'completed']);
    expect((await waitForEnd(svc, cases[1] as string)).status).toBe('COMPLETED');
    expect((await list({ status: 'completed' })).items.map((t) => t.taskId)).toEqual([taskId]);
    // The tenant's figures, computed in Postgres: one open, one completed with its decision time.
    const stats = await answered(svc.client.GET('/api/v1/stats/tasks', { params: { query: {} } }), 200);
    expect(stats.workspaces).toEqual([
      expect.objectContaining({
        workspaceId: svc.workspaceId,
        open: 1,
        completed: 1,
        decisionSeconds: expect.objectContaining({ count: 1 }),
      }),
    ]);
    await answered(
      svc.client.POST('/api/v1/case/{caseId}/cancel', { params: { path: { caseId: String(cases[0]) } } }),
      200,
    );
  });
});
