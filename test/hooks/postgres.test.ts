import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkflow, waitForEnd } from '../cases/support.js';
import { Graph } from '../support/graphs.js';
import { answered, answeredEmpty, refused, startTestService, type TestService } from '../support/harness.js';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres.js';
import { caseIdsOf, createHook, deliver, hookPath, sign } from './support.js';

describe('hooks on Postgres', () => {
  let schema: PostgresSchema;
  let svc: TestService;
  let workflowId: string;

  beforeAll(async () => {
    schema = await createPostgresSchema();
    svc = await startTestService({ databaseUrl: schema.url });
    const g = new Graph();
    g.edge(g.input([{ name: 'title' }]), g.output([{ name: 'title' }]));
    workflowId = (await createWorkflow(svc, g, 'pg hooks')).workflowId;
  });
  afterAll(async () => {
    await svc?.stop();
    await schema?.drop();
  });

  it('creates, lists, delivers once per delivery id, rotates, disables and deletes', async () => {
    const created = await createHook(svc, workflowId, {
      name: 'pg',
      scheme: 'github',
      mapping: { title: { body: '/title' } },
    });
    const { hookId, secret } = created;
    const page = await answered(
      svc.client.GET('/api/v1/workflow/{workflowId}/hooks', { params: { path: { workflowId }, query: { limit: 1 } } }),
      200,
    );
    expect(page.hooks.map((h) => h.hookId)).toEqual([hookId]);

    const body = JSON.stringify({ title: 'on postgres' });
    const headers = sign.github(secret, body, randomUUID());
    const answers = await Promise.all([1, 2, 3].map(() => deliver(svc, hookId, body, headers)));
    for (const answer of answers) expect(answer.status, answer.text).toBe(202);
    expect(new Set(answers.map((a) => a.body.caseId)).size).toBe(1);
    const caseId = String(answers[0]?.body.caseId);
    expect(await caseIdsOf(svc, workflowId)).toEqual([caseId]);
    expect(await waitForEnd(svc, caseId)).toMatchObject({ status: 'COMPLETED', hookId });

    const rotated = await answered(
      svc.client.POST('/api/v1/hooks/{hookId}/rotate-secret', { ...hookPath(hookId), body: { graceSeconds: 60 } }),
      200,
    );
    expect((await deliver(svc, hookId, body, sign.github(secret, body))).status).toBe(202);
    expect((await deliver(svc, hookId, body, sign.github(rotated.secret, body))).status).toBe(202);

    const off = await answered(
      svc.client.PATCH('/api/v1/hooks/{hookId}', { ...hookPath(hookId), body: { enabled: false } }),
      200,
    );
    expect(off.enabled).toBe(false);
    expect((await deliver(svc, hookId, body, sign.github(secret, body))).status).toBe(404);
    await answeredEmpty(svc.client.DELETE('/api/v1/hooks/{hookId}', hookPath(hookId)), 204);
    await refused(svc.client.GET('/api/v1/hooks/{hookId}', hookPath(hookId)), 404);
  });
});
