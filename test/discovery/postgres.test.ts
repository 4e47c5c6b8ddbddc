import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answered, startTestService, type TestService } from '../support/harness.js';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres.js';
import { createProcess, fixture, patchProcess, processBody, readProcess, snapshotProcess } from './support.js';

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
    const read = (processVersionId?: string) => answered(readProcess(svc, id, processVersionId), 200);
    const before = await read();
    const snaps = await Promise.all(Array.from({ length: 4 }, () => answered(snapshotProcess(svc, id), 201)));
    expect(snaps.map((s) => s.versionNumber).sort()).toEqual([1, 2, 3, 4]);
    await Promise.all(['A', 'B', 'C'].map((name) => answered(patchProcess(svc, id, { name }), 200)));
    const first = snaps.find((s) => s.versionNumber === 1);
    const atFirst = await read(String(first?.processVersionId));
    expect(atFirst).toEqual({ ...before, processVersionId: first?.processVersionId, versionNumber: 1 });
    expect(['A', 'B', 'C']).toContain((await read()).name);
  });

  it('imports BPMN and keeps the hierarchy', async () => {
    // Untyped: the import takes raw XML.
    const res = await svc.request('POST', '/api/v1/discovery/process/import', {
      rawBody: fixture('invoice-approval.bpmn'),
      headers: { 'content-type': 'application/xml', 'x-workspace-id': svc.workspaceId },
    });
    expect(res.status, res.text).toBe(201);
    const parent = (res.body.process as { id: string }).id;
    const child = await createProcess(svc, processBody({ parentProcessId: parent }));
    expect((await answered(readProcess(svc, child), 200)).parentProcessId).toBe(parent);
  });
});
