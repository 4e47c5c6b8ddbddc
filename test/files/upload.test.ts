import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.js';
import { download, expectedContentTypes, presign, samples, storedFiles, upload } from './support.js';

const tenMb = 10 * 1024 * 1024;

describe('file upload and download over HTTP', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => {
    await svc.stop();
  });

  it.each(Object.keys(samples))('round-trips a %s file with its content type and name', async (extension) => {
    const bytes = samples[extension] as Buffer;
    const name = `report ü${extension}`;
    const { presignedUrl, fileUrl } = await presign(svc, {
      fileExtension: extension,
      accessScope: 'organization',
      originalName: name,
    });
    expect(presignedUrl).toMatch(
      /^http:\/\/127\.0\.0\.1:\d+\/api\/v1\/file\/upload\/[0-9a-f-]{36}\?expires=\d+&signature=/,
    );
    expect(fileUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1\/file\/[0-9a-f-]{36}$/);

    const put = await upload(presignedUrl, bytes, { 'content-type': 'application/octet-stream' });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ fileUrl, sizeBytes: bytes.length, fileExtension: extension, originalName: name });

    const got = await download(svc, fileUrl);
    expect(got.status).toBe(200);
    expect(got.bytes.equals(bytes)).toBe(true);
    expect(got.headers.get('content-type')).toMatch(expectedContentTypes[extension] as RegExp);
    expect(got.headers.get('content-disposition')).toContain(
      `filename*=UTF-8''report%20%C3%BC${extension.replace('.', '.')}`,
    );
    expect(got.headers.get('content-disposition')).toMatch(/^attachment;/);
    expect(got.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('takes the deprecated POST /job/file/upload the same way, and a .json file sent as application/json stays raw', async () => {
    const { presignedUrl, fileUrl } = await presign(svc, { fileExtension: '.json' }, undefined, '/job/file/upload');
    const bytes = Buffer.from('  {"spaces": "kept",\n "exact": true}  ');
    expect((await upload(presignedUrl, bytes, { 'content-type': 'application/json' })).status).toBe(200);
    const got = await download(svc, fileUrl);
    expect(got.bytes.equals(bytes)).toBe(true);
    expect(got.headers.get('content-disposition')).toMatch(/filename="[0-9a-f-]{36}\.json"/);
  });

  it('needs the key to download, not to upload', async () => {
    const { presignedUrl, fileUrl } = await presign(svc, { fileExtension: '.txt' });
    expect((await upload(presignedUrl, Buffer.from('hello'))).status).toBe(200);
    expect((await download(svc, fileUrl, null)).status).toBe(401);
    const noKey = await svc.request('POST', '/api/v1/file/upload/presigned', {
      body: { fileExtension: '.txt' },
      key: null,
    });
    expect(noKey.status).toBe(401);
  });

  it('accepts exactly 10 MB and rejects one byte more with 413, leaving nothing behind', async () => {
    const exact = await presign(svc, { fileExtension: '.txt', accessScope: 'organization' });
    const ok = await upload(exact.presignedUrl, Buffer.alloc(tenMb, 'a'));
    expect(ok.status).toBe(200);
    expect(ok.body.sizeBytes).toBe(tenMb);
    const got = await download(svc, exact.fileUrl);
    expect(got.bytes.length).toBe(tenMb);

    const before = storedFiles(svc).sort();
    const over = await presign(svc, { fileExtension: '.txt', accessScope: 'organization' });
    // With Content-Length: refused before a byte is stored.
    const declared = await upload(over.presignedUrl, Buffer.alloc(tenMb + 1, 'a'));
    expect(declared.status).toBe(413);
    expect(declared.body).toMatchObject({ statusCode: 413, errorCode: 'PAYLOAD_TOO_LARGE' });
    // Chunked, no Content-Length: refused while streaming, at the byte past the limit.
    const chunk = new Uint8Array(1024 * 1024).fill(98);
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= tenMb + 1) {
          controller.close();
          return;
        }
        const size = Math.min(chunk.length, tenMb + 1 - sent);
        controller.enqueue(chunk.subarray(0, size));
        sent += size;
      },
    });
    const streamed = await upload(over.presignedUrl, stream);
    expect(streamed.status).toBe(413);
    expect(storedFiles(svc).sort()).toEqual(before);
    expect((await download(svc, over.fileUrl)).status).toBe(404);
    // The failed attempts did not use the URL up.
    expect((await upload(over.presignedUrl, Buffer.from('small'))).status).toBe(200);
  });

  it('uses a URL once', async () => {
    const { presignedUrl } = await presign(svc, { fileExtension: '.txt' });
    expect((await upload(presignedUrl, Buffer.from('first'))).status).toBe(200);
    const again = await upload(presignedUrl, Buffer.from('second'));
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ errorCode: 'CONFLICT' });
  });

  it('rejects unsupported or malformed extensions at presign time', async () => {
    // Untyped: the bodies the contract refuses.
    for (const fileExtension of ['.exe', 'pdf', '', '.tar.gz']) {
      const res = await svc.request('POST', '/api/v1/file/upload/presigned', { body: { fileExtension } });
      expect(res.status, fileExtension).toBe(400);
    }
    expect((await svc.request('POST', '/api/v1/file/upload/presigned', { body: {} })).status).toBe(400);
    expect(
      (
        await svc.request('POST', '/api/v1/file/upload/presigned', {
          body: { fileExtension: '.pdf', accessScope: 'everyone' },
        })
      ).status,
    ).toBe(400);
    // Case does not matter.
    await presign(svc, { fileExtension: '.PDF' });
  });

  it('rejects bytes that do not match the declared extension and stores nothing', async () => {
    const before = storedFiles(svc).sort();
    const cases: Array<[string, Buffer]> = [
      ['.pdf', samples['.png'] as Buffer],
      ['.png', samples['.jpeg'] as Buffer],
      ['.jpg', samples['.pdf'] as Buffer],
      ['.docx', samples['.xls'] as Buffer],
      ['.xls', samples['.xlsx'] as Buffer],
      ['.json', Buffer.from('{"not": json}')],
      ['.txt', Buffer.from([0x68, 0x69, 0xff, 0xfe, 0x00])],
      ['.csv', samples['.png'] as Buffer],
      ['.pdf', Buffer.alloc(0)],
    ];
    for (const [extension, bytes] of cases) {
      const { presignedUrl, fileUrl } = await presign(svc, { fileExtension: extension, accessScope: 'organization' });
      const res = await upload(presignedUrl, bytes);
      expect(res.status, extension).toBe(400);
      expect(res.body.message).toMatch(new RegExp(`not a valid \\${extension} file`));
      expect((await download(svc, fileUrl)).status).toBe(404);
    }
    expect(storedFiles(svc).sort()).toEqual(before);
  });

  it('refuses a tampered signature, expiry or file id with 403', async () => {
    const { presignedUrl } = await presign(svc, { fileExtension: '.txt' });
    const url = new URL(presignedUrl);
    const signature = url.searchParams.get('signature') ?? '';
    const flipped = new URL(url);
    flipped.searchParams.set('signature', (signature[0] === 'A' ? 'B' : 'A') + signature.slice(1));
    const later = new URL(url);
    later.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 3600));
    const other = await presign(svc, { fileExtension: '.txt' });
    const swapped = new URL(url);
    swapped.pathname = new URL(other.presignedUrl).pathname;
    const unsigned = new URL(url);
    unsigned.searchParams.delete('signature');
    for (const bad of [flipped, later, swapped]) {
      const res = await upload(bad.toString(), Buffer.from('x'));
      expect(res.status, bad.toString()).toBe(403);
      expect(res.body).toMatchObject({ statusCode: 403, errorCode: 'FORBIDDEN' });
    }
    expect((await upload(unsigned.toString(), Buffer.from('x'))).status).toBe(400);
    // The genuine URL still works afterwards.
    expect((await upload(presignedUrl, Buffer.from('x'))).status).toBe(200);
  });

  it('answers unknown file URLs with 404 and unfinished uploads with 404', async () => {
    expect((await download(svc, `${svc.url}/api/v1/file/${crypto.randomUUID()}`)).status).toBe(404);
    const { fileUrl } = await presign(svc, { fileExtension: '.txt' });
    const res = await download(svc, fileUrl);
    expect(res.status).toBe(404);
    expect(JSON.parse(res.bytes.toString())).toMatchObject({ errorCode: 'NOT_FOUND' });
    expect((await download(svc, `${svc.url}/api/v1/file/not-a-uuid`)).status).toBe(400);
  });
});
