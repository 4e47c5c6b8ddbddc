import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.js';
import { download, presign, samples, storedFiles, upload } from './support.js';

/**
 * There is no S3 server on this machine: this is a minimal path-style object
 * store over real HTTP (PUT, GET, DELETE of whole objects, S3's NoSuchKey
 * error), enough to drive the real AWS SDK through the S3 backend. It checks
 * neither signatures nor S3's finer semantics; a real bucket is the true test.
 */
function fakeS3(): Promise<{
  server: Server;
  url: string;
  objects: Map<string, { body: Buffer; contentType: string }>;
}> {
  const objects = new Map<string, { body: Buffer; contentType: string }>();
  const read = async (req: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  };
  const server = createServer(async (req, res) => {
    const key = decodeURIComponent(new URL(req.url ?? '/', 'http://s3').pathname);
    if (req.method === 'PUT') {
      objects.set(key, { body: await read(req), contentType: req.headers['content-type'] ?? '' });
      res.writeHead(200, { etag: '"e"' }).end();
    } else if (req.method === 'GET' && objects.has(key)) {
      const object = objects.get(key) as { body: Buffer; contentType: string };
      res.writeHead(200, { 'content-type': object.contentType, 'content-length': object.body.length }).end(object.body);
    } else if (req.method === 'DELETE') {
      objects.delete(key);
      res.writeHead(204).end();
    } else {
      res
        .writeHead(404, { 'content-type': 'application/xml' })
        .end('<?xml version="1.0"?><Error><Code>NoSuchKey</Code><Message>none</Message></Error>');
    }
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, objects }),
    );
  });
}

describe('S3-compatible storage backend (against a fake S3 over HTTP)', () => {
  let s3: Awaited<ReturnType<typeof fakeS3>>;
  let svc: TestService;
  beforeAll(async () => {
    s3 = await fakeS3();
    svc = await startTestService({
      config: {
        files: {
          storage: 's3',
          s3: {
            bucket: 'caseflow-files',
            endpoint: s3.url,
            forcePathStyle: true,
            accessKeyId: 'test',
            secretAccessKey: 'test-secret',
            prefix: 'p/',
          },
        },
      },
    });
  });
  afterAll(async () => {
    await svc?.stop();
    await new Promise((resolve) => s3.server.close(resolve));
  });

  it('commits checked uploads to the bucket and serves them back', async () => {
    const p = await presign(svc, { fileExtension: '.xlsx', accessScope: 'organization', originalName: 'sheet.xlsx' });
    expect((await upload(p.presignedUrl, samples['.xlsx'] as Buffer)).status).toBe(200);
    const key = `/caseflow-files/p/${svc.organizationId}/${p.fileId}.xlsx`;
    expect(s3.objects.get(key)?.body.equals(samples['.xlsx'] as Buffer)).toBe(true);
    // Nothing stays on local disk: temporary files are removed once in the bucket.
    expect(storedFiles(svc)).toEqual([]);
    const got = await download(svc, p.fileUrl);
    expect(got.status).toBe(200);
    expect(got.bytes.equals(samples['.xlsx'] as Buffer)).toBe(true);

    const bad = await presign(svc, { fileExtension: '.xlsx' });
    expect((await upload(bad.presignedUrl, samples['.pdf'] as Buffer)).status).toBe(400);
    expect([...s3.objects.keys()].some((k) => k.includes(bad.fileId))).toBe(false);
  });

  it('stores node outputs in the bucket', async () => {
    const files = svc.service.context.services.files;
    const url = await files.storeNodeOutput({
      organizationId: svc.organizationId,
      workspaceId: svc.workspaceId,
      name: 'n.txt',
      contentType: 'text/plain',
      bytes: Buffer.from('node'),
    });
    const scope = { caseId: crypto.randomUUID(), organizationId: svc.organizationId, workspaceId: svc.workspaceId };
    expect(await files.readForNode(url, scope)).toMatchObject({ name: 'n.txt', bytes: Buffer.from('node') });
  });
});
