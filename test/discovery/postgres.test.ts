import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.js';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres.js';
import { createProcess, fixture, processBody } from './support.js';

describe('discovered processes on Postgres', () => {
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

  it('creates, updates, snapshots concurrently and reads snapshots back unchanged', async () => {
    const id = await createProcess(svc);
    const before = (await svc.request('GET', `/api/v1/discovery/process/${id}`)).body;
    const snaps = await Promise.all(
      Array.from({ length: 4 }, () => svc.request('POST', `/api/v1/discovery/process/${id}/version`)),
    );
    expect(snaps.map((s) => Number(s.body.versionNumber)).sort()).toEqual([1, 2, 3, 4]);
    const updates = await Promise.all(
      ['A', 'B', 'C'].map((name) => svc.request('PATCH', `/api/v1/discovery/process/${id}`, { body: { name } })),
    );
    expect(updates.map((u) => u.status)).toEqual([200, 200, 200]);
    const first = snaps.find((s) => s.body.versionNumber === 1);
    const atFirst = await svc.request(
      'GET',
      `/api/v1/discovery/process/${id}?processVersionId=${String(first?.body.processVersionId)}`,
    );
    expect(atFirst.body).toEqual({ ...before, processVersionId: first?.body.processVersionId, versionNumber: 1 });
    expect(['A', 'B', 'C']).toContain((await svc.request('GET', `/api/v1/discovery/process/${id}`)).body.name);
  });

  it('imports BPMN and keeps the hierarchy', async () => {
    const res = await svc.request('POST', '/api/v1/discovery/process/import', {
      rawBody: fixture('invoice-approval.bpmn'),
      headers: { 'content-type': 'application/xml', 'x-workspace-id': svc.workspaceId },
    });
    expect(res.status, res.text).toBe(201);
    const parent = (res.body.process as { id: string }).id;
    const child = await createProcess(svc, processBody({ parentProcessId: parent }));
    const read = await svc.request('GET', `/api/v1/discovery/process/${child}`);
    expect(read.body.parentProcessId).toBe(parent);
  });
});
