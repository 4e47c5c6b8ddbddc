import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorHandler } from '../../src/api/errors.js';
import { requestLog } from '../../src/api/request-log.js';
import { DomainError } from '../../src/errors.js';
import { createLogger } from '../../src/logging/logger.js';

/** An app with the request log first and the API's error handler last, logging into `lines` at `level`. */
async function serve(
  level: string,
): Promise<{ url: string; lines: Array<Record<string, unknown>>; close: () => void }> {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean))
        lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const logger = createLogger(level, {}, 'json', sink);
  const app = express();
  app.use(requestLog(logger));
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/things/:id', (_req, res) => {
    res.json({ ok: true });
  });
  for (const path of ['/api/v1/integration/connect/:connectionToken', '/api/v1/task-links/:token'])
    app.get(path, (_req, res) => {
      res.json({ ok: true });
    });
  app.get('/missing', () => {
    throw DomainError.notFound('nothing here');
  });
  app.get('/unavailable', () => {
    throw DomainError.unavailable('The database is unavailable; try again after Retry-After', 5);
  });
  app.get('/broken', () => {
    throw new Error('boom');
  });
  app.use(errorHandler(logger));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, lines, close: () => server.close() };
}

/** Lines are written when the answer is done, which can be just after the client has it. */
async function settled(lines: unknown[], count: number): Promise<void> {
  for (let i = 0; i < 100 && lines.length < count; i++) await new Promise((resolve) => setTimeout(resolve, 10));
}

describe('request log', () => {
  let info: Awaited<ReturnType<typeof serve>>;
  let warn: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => {
    [info, warn] = await Promise.all([serve('info'), serve('warn')]);
  });
  afterAll(() => {
    info.close();
    warn.close();
  });

  it('logs one info line per answered request: id, method, redacted url, query, headers, status, duration', async () => {
    info.lines.length = 0;
    const res = await fetch(`${info.url}/things/42?signature=s3cret&page=2`, {
      headers: { 'x-request-id': 'req-1.a', 'x-service-key': 'cf_key_secret9' },
    });
    expect(res.headers.get('x-request-id')).toBe('req-1.a');
    await settled(info.lines, 1);
    expect(info.lines).toHaveLength(1);
    const line = info.lines[0] ?? {};
    expect(line).toMatchObject({
      level: 30,
      msg: 'request completed',
      req: {
        id: 'req-1.a',
        method: 'GET',
        url: '/things/42?signature=[redacted]&page=2',
        query: { signature: '[redacted]', page: '2' },
        headers: { 'x-service-key': '[redacted]' },
        remoteAddress: '127.0.0.1',
      },
      res: { statusCode: 200, headers: { 'x-request-id': 'req-1.a' } },
    });
    expect(typeof (line.req as { remotePort?: unknown }).remotePort).toBe('number');
    expect(typeof line.responseTime).toBe('number');
    expect(JSON.stringify(line)).not.toMatch(/s3cret|secret9/);
  });

  it.each(['/api/v1/integration/connect/', '/api/v1/task-links/'])(
    'never logs the bearer token in %s (OAuth connect check, task completion link), in the url or as a route param',
    async (prefix) => {
      info.lines.length = 0;
      await fetch(`${info.url}${prefix}tok-s3cret`);
      await settled(info.lines, 1);
      expect(info.lines).toHaveLength(1);
      expect((info.lines[0]?.req as { url?: string }).url).toBe(`${prefix}[redacted]`);
      expect(JSON.stringify(info.lines)).not.toContain('s3cret');
    },
  );

  it('generates an id when the caller sends none or one it would not echo', async () => {
    const plain = await fetch(`${info.url}/things/1`);
    const odd = await fetch(`${info.url}/things/1`, { headers: { 'x-request-id': 'has spaces' } });
    for (const res of [plain, odd]) expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(plain.headers.get('x-request-id')).not.toBe(odd.headers.get('x-request-id'));
  });

  it('logs 4xx as warn and 5xx as error with the error, the unhandled one also on its own line', async () => {
    info.lines.length = 0;
    expect((await fetch(`${info.url}/missing`)).status).toBe(404);
    await settled(info.lines, 1);
    expect(info.lines).toEqual([
      expect.objectContaining({
        level: 40,
        msg: 'request completed',
        res: expect.objectContaining({ statusCode: 404 }),
      }),
    ]);
    info.lines.length = 0;
    const broken = await fetch(`${info.url}/broken`, { headers: { 'x-request-id': 'req-500' } });
    expect(broken.status).toBe(500);
    await settled(info.lines, 2);
    expect(info.lines).toEqual([
      expect.objectContaining({
        level: 50,
        msg: 'unhandled error',
        err: expect.objectContaining({ message: 'boom' }),
        req: expect.objectContaining({ id: 'req-500', url: '/broken' }),
      }),
      expect.objectContaining({
        level: 50,
        msg: 'request errored',
        err: expect.objectContaining({ message: 'failed with status code 500' }),
        req: expect.objectContaining({ id: 'req-500' }),
        res: expect.objectContaining({ statusCode: 500 }),
      }),
    ]);
  });

  it('logs a 503 (a part is down, Retry-After given) as warn, not as an error', async () => {
    info.lines.length = 0;
    expect((await fetch(`${info.url}/unavailable`)).status).toBe(503);
    await settled(info.lines, 1);
    expect(info.lines).toEqual([
      expect.objectContaining({ level: 40, msg: 'request errored', res: expect.objectContaining({ statusCode: 503 }) }),
    ]);
  });

  it('leaves probes out, and writes nothing below the level (a 200 at warn) while still giving the id', async () => {
    info.lines.length = 0;
    await fetch(`${info.url}/healthz`);
    await fetch(`${info.url}/things/2`);
    await settled(info.lines, 1);
    expect(info.lines.map((line) => (line.req as { url: string }).url)).toEqual(['/things/2']);

    warn.lines.length = 0;
    const ok = await fetch(`${warn.url}/things/3`);
    expect(ok.headers.get('x-request-id')).toBeTruthy();
    await fetch(`${warn.url}/missing`);
    await settled(warn.lines, 1);
    expect(warn.lines.map((line) => [line.level, (line.req as { url: string }).url])).toEqual([[40, '/missing']]);
  });
});
