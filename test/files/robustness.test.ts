import { mkdirSync, readdirSync, readlinkSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FileService } from '../../src/files/file-service.js';
import { startTestService, type TestService } from '../support/harness.js';
import { presign, upload } from './support.js';

/** Open file descriptors of this process (the service runs in it) on paths under dir. */
function openFdsUnder(dir: string): number {
  let count = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`).startsWith(dir)) count += 1;
    } catch {
      // closed between the listing and the read
    }
  }
  return count;
}

describe('downloads and stored content types', () => {
  let svc: TestService;
  let files: FileService;
  beforeAll(async () => {
    svc = await startTestService();
    files = svc.service.context.services.files;
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('closes the storage stream when the client aborts mid-download', async () => {
    const p = await presign(svc, { fileExtension: '.txt', accessScope: 'organization' });
    expect((await upload(p.presignedUrl, Buffer.alloc(10 * 1024 * 1024, 'x'))).status).toBe(200);
    const objects = path.join(svc.dataDir, 'files', 'objects');
    const abort = new AbortController();
    const response = await fetch(p.fileUrl, { headers: { 'x-service-key': svc.key }, signal: abort.signal });
    const reader = response.body?.getReader();
    await reader?.read();
    expect(openFdsUnder(objects)).toBe(1);
    abort.abort();
    const until = Date.now() + 5000;
    while (openFdsUnder(objects) > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    expect(openFdsUnder(objects)).toBe(0);
  });

  it('refuses node output content types with CR/LF or outside the known list', async () => {
    const base = { organizationId: svc.organizationId, workspaceId: svc.workspaceId, bytes: Buffer.from('<p>x</p>') };
    await expect(
      files.storeNodeOutput({ ...base, name: 'a.html', contentType: 'text/html\r\nSet-Cookie: a=b' }),
    ).rejects.toThrow(/control characters/);
    await expect(files.storeNodeOutput({ ...base, name: 'a.txt', contentType: 'text/html' })).rejects.toThrow(
      /not allowed/,
    );
    await expect(files.storeNodeOutput({ ...base, name: 'a.svg', contentType: 'image/svg+xml' })).rejects.toThrow(
      /not allowed/,
    );
    const served = async (url: string) =>
      (await fetch(url, { headers: { 'x-service-key': svc.key } })).headers.get('content-type');
    expect(await served(await files.storeNodeOutput({ ...base, name: 'a.svg', contentType: '' }))).toBe(
      'application/octet-stream',
    );
    expect(
      await served(await files.storeNodeOutput({ ...base, name: 'a.html', contentType: 'TEXT/HTML; charset=latin1' })),
    ).toBe('text/html; charset=utf-8');
  });
});

describe('uploads stuck in receiving after a crash', () => {
  it('are released and their temporary files removed at start', async () => {
    const first = await startTestService({ config: { files: { uploadUrlTtlSeconds: 1 } } });
    const p = await presign(first, { fileExtension: '.txt', accessScope: 'organization' });
    // What a crash mid-upload leaves: the claim taken and a partial temporary file.
    await first.service.context.store.db
      .updateTable('files')
      .set({ status: 'receiving' })
      .where('id', '=', p.fileId)
      .execute();
    const tempDir = path.join(first.dataDir, 'files', 'tmp');
    mkdirSync(tempDir, { recursive: true });
    const partial = path.join(tempDir, `${p.fileId}.${crypto.randomUUID()}.part`);
    writeFileSync(partial, 'half an upload');
    await first.stop({ keepData: true });
    await new Promise((r) => setTimeout(r, 1100));

    const second = await startTestService({
      dataDir: first.dataDir,
      taskQueue: first.taskQueue,
      config: { files: { uploadUrlTtlSeconds: 1 } },
    });
    try {
      const db = second.service.context.store.db;
      const until = Date.now() + 5000;
      const status = async () =>
        (await db.selectFrom('files').select('status').where('id', '=', p.fileId).executeTakeFirst())?.status;
      // The record is released first, then the temporary files go.
      while (((await status()) !== 'pending' || existsSync(partial)) && Date.now() < until)
        await new Promise((r) => setTimeout(r, 50));
      expect(await status()).toBe('pending');
      expect(existsSync(partial)).toBe(false);
    } finally {
      await second.stop();
    }
  });
});
