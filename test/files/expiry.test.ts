import { rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.js';
import { download, presign, upload } from './support.js';

describe('presigned URL expiry and the signing secret', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ config: { files: { uploadUrlTtlSeconds: 1 } } });
  });
  afterAll(async () => {
    await svc.stop();
  });

  it('refuses an expired upload URL with 403 and stores nothing', async () => {
    const p = await presign(svc, { fileExtension: '.txt', accessScope: 'organization' });
    expect(Date.parse(p.expiresAt) - Date.now()).toBeLessThanOrEqual(1000);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const res = await upload(p.presignedUrl, Buffer.from('too late'));
    expect(res.status).toBe(403);
    expect(res.body.message).toMatch(/expired/);
    const file = await svc.client.GET('/api/v1/file/{fileId}', { params: { path: { fileId: p.fileId } } });
    expect(file.response.status).toBe(404);
  });

  it('keeps the signing secret in the data directory with mode 0600', () => {
    const info = statSync(path.join(svc.dataDir, 'file-signing.key'));
    expect(info.mode & 0o777).toBe(0o600);
  });
});

describe('upload URLs across a restart', () => {
  it('stay valid: the signing secret and the pending record are on disk, not in memory', async () => {
    const first = await startTestService();
    const p = await presign(first, { fileExtension: '.txt', accessScope: 'organization' });
    await first.stop({ keepData: true });
    const second = await startTestService({ dataDir: first.dataDir, taskQueue: first.taskQueue, key: first.key });
    try {
      const origin = new URL(second.url);
      const url = new URL(p.presignedUrl);
      url.host = origin.host;
      expect((await upload(url.toString(), Buffer.from('after restart'))).status).toBe(200);
      const got = await download(second, second.url + new URL(p.fileUrl).pathname);
      expect(got.status).toBe(200);
      expect(got.bytes.toString()).toBe('after restart');
    } finally {
      await second.stop();
      rmSync(first.dataDir, { recursive: true, force: true });
    }
  });
});
