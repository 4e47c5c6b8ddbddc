import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/index.js';
import { FileRepo } from '../../src/store/file-repo.js';
import { answered, startTestService, type TestService } from '../support/harness.js';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres.js';
import { download, presign, samples, upload } from './support.js';
import { newKey, newWorkspace } from '../support/keys.js';

describe('files on Postgres', () => {
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

  it('uploads once, downloads, and lists by scope', async () => {
    const scoped = await newKey(svc, ['file:read'], { workspaceIds: [await newWorkspace(svc)] });
    const listed = await presign(svc, {
      fileExtension: '.png',
      accessScope: 'workspace',
      workspaceId: svc.workspaceId,
    });
    const hidden = await presign(svc, { fileExtension: '.png' });
    for (const p of [listed, hidden])
      expect((await upload(p.presignedUrl, samples['.png'] as Buffer)).status).toBe(200);
    expect((await upload(listed.presignedUrl, samples['.png'] as Buffer)).status).toBe(409);

    const got = await download(svc, listed.fileUrl);
    expect(got.status).toBe(200);
    expect(got.bytes.equals(samples['.png'] as Buffer)).toBe(true);
    expect((await download(svc, listed.fileUrl, scoped.key)).status).toBe(403);

    const mine = await answered(svc.client.GET('/api/v1/file'), 200);
    expect(mine.files.map((f) => [f.fileId, f.sizeBytes])).toEqual([
      [listed.fileId, (samples['.png'] as Buffer).length],
    ]);
    const theirs = await answered(createClient({ baseUrl: svc.url, key: scoped.key }).GET('/api/v1/file'), 200);
    expect(theirs.files).toEqual([]);
  });

  it('counts per-case reads atomically and releases stuck uploads', async () => {
    const repo = new FileRepo(svc.service.context.store.db);
    const caseId = crypto.randomUUID();
    const limits = { maxFiles: 3, maxBytes: 100 };
    const results = await Promise.all([40, 40, 40, 40].map((bytes) => repo.reserveCaseRead(caseId, bytes, limits)));
    expect(results.filter(Boolean)).toHaveLength(2);
    expect(await repo.reserveCaseRead(caseId, 20, limits)).toBe(true);
    expect(await repo.reserveCaseRead(caseId, 1, limits)).toBe(false);

    const p = await presign(svc, { fileExtension: '.txt' });
    expect(await repo.claimForUpload(p.fileId)).toBe(true);
    expect(await repo.releaseStuckUploads(new Date(Date.now() + 3600_000).toISOString())).toContain(p.fileId);
    expect((await repo.find(p.fileId))?.status).toBe('pending');
  });
});
