import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answeredEmpty, refused, startTestService, type TestService } from '../support/harness.js';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres.js';
import { Receiver } from '../callbacks/receiver.js';
import { caseStatus, createWorkflow, startCase, waitForEnd } from '../cases/support.js';
import { Graph } from '../support/graphs.js';

describe('retention and erasure on Postgres', () => {
  let schema: PostgresSchema;
  let svc: TestService;
  let workflowId: string;

  beforeAll(async () => {
    schema = await createPostgresSchema();
    svc = await startTestService({ databaseUrl: schema.url });
    const g = new Graph();
    const input = g.input([{ name: 'text' }]);
    const output = g.output([{ name: 'text' }]);
    g.edge(input, output);
    workflowId = (await createWorkflow(svc, g, 'echo')).workflowId;
  }, 120_000);
  afterAll(async () => {
    await svc?.stop();
    await schema?.drop();
  });

  it('erases a case with its deliveries and purges by policy, with no vacuum step', async () => {
    const hook = new Receiver();
    await hook.listen();
    const erased = await startCase(svc, workflowId, { text: 'a' }, { callbackUrl: hook.url });
    await waitForEnd(svc, erased);
    await expect.poll(() => hook.received.length, { timeout: 15_000 }).toBe(1);
    await hook.close();
    await answeredEmpty(svc.client.DELETE('/api/v1/case/{caseId}', { params: { path: { caseId: erased } } }), 204);
    const { db } = svc.service.context.store;
    expect(await db.selectFrom('callback_deliveries').select('id').where('case_id', '=', erased).execute()).toEqual([]);

    const old = await startCase(svc, workflowId, { text: 'b' });
    await waitForEnd(svc, old);
    await db
      .updateTable('cases')
      .set({ finished_at: new Date(Date.now() - 40 * 86_400_000).toISOString() })
      .where('id', '=', old)
      .execute();
    const kept = await startCase(svc, workflowId, { text: 'c' });
    await waitForEnd(svc, kept);
    await svc.admin('PUT', `/admin/organizations/${svc.organizationId}/retention`, {
      keepDays: 30,
      keepFailedDays: null,
    });
    const { retention } = svc.service.context.services;
    expect(await retention.purgeBatch()).toMatchObject({ cases: 1, more: false });
    expect(await retention.reclaimSpace()).toEqual({ bytesReclaimed: 0 });
    await refused(svc.client.GET('/api/v1/case/{caseId}/status', { params: { path: { caseId: old } } }), 404);
    expect((await caseStatus(svc, kept)).status).toBe('COMPLETED');
  }, 120_000);
});
