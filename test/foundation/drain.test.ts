import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { answered, startTestService } from '../support/harness.js';

describe('graceful shutdown', () => {
  it('stops accepting connections but lets an in-flight request finish', async () => {
    const svc = await startTestService();
    const presign = await answered(
      svc.client.POST('/api/v1/file/upload/presigned', { body: { fileExtension: '.txt' } }),
      201,
    );
    const target = new URL(presign.presignedUrl);
    const body = Buffer.from('half of it, then the rest after shutdown began\n');

    // An upload whose body arrives in two parts, with the shutdown starting in between.
    const response = new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: new URL(svc.url).port,
          path: target.pathname + target.search,
          method: 'PUT',
          headers: { 'content-length': body.length },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.write(body.subarray(0, 10));
      setTimeout(() => req.end(body.subarray(10)), 600);
    });
    await new Promise((r) => setTimeout(r, 200));
    const stopping = svc.stop();
    await new Promise((r) => setTimeout(r, 150));
    await expect(fetch(`${svc.url}/healthz`)).rejects.toThrow();
    expect(await response).toBe(200);
    await stopping;
  });
});
