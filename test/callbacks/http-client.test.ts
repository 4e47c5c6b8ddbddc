import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { classifyStatus, post } from '../../src/callbacks/delivery.js';
import { freePort } from '../../src/net/free-port.js';
import { Outbound, OutboundRequestError, type Resolver } from '../../src/net/outbound.js';
import { selfSignedCertificate } from '../support/self-signed.js';
import { Receiver, type Responder } from './receiver.js';

/**
 * What the outbound client does for a callback's POST that got did before it (node:http now): the attempt's
 * recorded status, error text and retry decision, read through delivery.ts's post as the callback service reads them.
 */
describe('the outbound HTTP client', () => {
  const receivers: Receiver[] = [];
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((r) => r.close()));
  });

  async function receiver(responder: Responder): Promise<Receiver> {
    const r = new Receiver(responder);
    await r.listen();
    receivers.push(r);
    return r;
  }

  const loopback = new Outbound({ allowCidrs: '127.0.0.1/32' });
  const body = JSON.stringify({ caseId: 'c1', status: 'COMPLETED' });
  const send = (url: string, timeoutMs = 2000, outbound = loopback) =>
    post(outbound, url, body, { 'content-type': 'application/json' }, timeoutMs);

  it('sends the body with its length and asks for the encodings it undoes', async () => {
    const hook = await receiver((_call, res) => {
      res.setHeader('content-encoding', 'gzip');
      res.end(gzipSync('thanks'));
    });
    expect(await send(hook.url)).toEqual({ status: 200, body: 'thanks', error: null });
    const [call] = hook.received;
    expect(call).toMatchObject({ method: 'POST', path: '/hook', body });
    expect(call!.headers).toMatchObject({
      'content-length': String(Buffer.byteLength(body)),
      'content-type': 'application/json',
      'accept-encoding': 'gzip, deflate, br',
    });
    expect(call!.headers['transfer-encoding']).toBeUndefined();
  });

  it('undoes a deflate answer raw (RFC 1951), zlib-wrapped (RFC 1950) or gzip mislabelled, and an empty one', async () => {
    const text = 'thanks, '.repeat(40);
    for (const encoded of [deflateRawSync(text), deflateSync(text), gzipSync(text)]) {
      const hook = await receiver((_call, res) => {
        res.setHeader('content-encoding', 'deflate');
        res.end(encoded);
      });
      expect(await send(hook.url)).toEqual({ status: 200, body: text, error: null });
    }
    const empty = await receiver((_call, res) => {
      res.setHeader('content-encoding', 'deflate');
      res.end();
    });
    const started = Date.now();
    expect(await send(empty.url, 10_000)).toEqual({ status: 200, body: '', error: null });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('ends a raw deflate answer with what it decoded when bytes follow its stream, well within the timeout', async () => {
    const trailing = Buffer.from('not deflate at all');
    const oneWrite = await receiver((_call, res) => {
      res.setHeader('content-encoding', 'deflate');
      res.end(Buffer.concat([deflateRawSync('thanks'), trailing]));
    });
    const later = await receiver((_call, res) => {
      res.setHeader('content-encoding', 'deflate');
      res.write(deflateRawSync('thanks'));
      setTimeout(() => res.write(trailing), 20);
      setTimeout(() => res.end(trailing), 40);
    });
    for (const hook of [oneWrite, later]) {
      const started = Date.now();
      expect(await send(hook.url, 10_000)).toEqual({ status: 200, body: 'thanks', error: null });
      expect(Date.now() - started).toBeLessThan(5000);
    }
    // An answer held open after them ends with its timeout, not later, with the decoded part kept.
    const held = await receiver((_call, res) => {
      res.setHeader('content-encoding', 'deflate');
      res.write(Buffer.concat([deflateRawSync('thanks'), trailing]));
    });
    const started = Date.now();
    expect(await send(held.url, 300)).toEqual({ status: 200, body: 'thanks', error: null });
    expect(Date.now() - started).toBeLessThan(4000);
  });

  it('keeps 1 KB of a raw deflate bomb, and drops the connection of one still coming', async () => {
    // 50 MB of zeros in ~50 KB.
    const bomb = deflateRawSync(Buffer.alloc(50_000_000));
    const whole = await receiver((_call, res) => {
      res.setHeader('content-encoding', 'deflate');
      res.end(bomb);
    });
    let closed = false;
    const coming = await receiver((_call, res) => {
      res.setHeader('content-encoding', 'deflate');
      res.write(bomb);
      res.on('close', () => (closed = true));
    });
    for (const hook of [whole, coming]) {
      const started = Date.now();
      expect(await send(hook.url, 10_000)).toEqual({ status: 200, body: '\0'.repeat(1024), error: null });
      expect(Date.now() - started).toBeLessThan(5000);
    }
    await expect.poll(() => closed).toBe(true);
  });

  it('gives up on a receiver that does not answer within the timeout: timed out, retried', async () => {
    const hook = await receiver(() => undefined);
    const started = Date.now();
    const outcome = await send(hook.url, 300);
    expect(Date.now() - started).toBeLessThan(1500);
    expect(outcome).toEqual({ status: null, body: null, error: 'no answer within 300 ms', timedOut: true });
    expect(classifyStatus(outcome.status)).toBe('retry');
    // The token and test calls show the client's own words, as got's were.
    await expect(loopback.request(hook.url, { timeoutMs: 200, maxResponseBytes: 10 })).rejects.toMatchObject({
      message: "Timeout awaiting 'request' for 200ms",
      code: 'ETIMEDOUT',
    });
  });

  it('keeps the status and what came of an answer cut short by the timeout or a reset', async () => {
    const slow = await receiver((_call, res) => {
      res.writeHead(500);
      res.write('half of');
    });
    const started = Date.now();
    expect(await send(slow.url, 300)).toEqual({ status: 500, body: 'half of', error: 'receiver answered HTTP 500' });
    expect(Date.now() - started).toBeLessThan(1500);
    const reset = await receiver((_call, res) => {
      res.writeHead(200);
      res.write('partial');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    expect(await send(reset.url)).toEqual({ status: 200, body: 'partial', error: null });
  });

  it('refuses an address the policy refuses without connecting', async () => {
    const hook = await receiver((_call, res) => res.end('ok'));
    const strict = new Outbound();
    const outcome = await send(hook.url, 2000, strict);
    expect(outcome).toEqual({ status: null, body: null, error: strict.refusal('127.0.0.1')?.message, timedOut: false });
    expect(hook.connections).toBe(0);
  });

  it('returns a redirect as its status, not followed, and retries it', async () => {
    const target = await receiver((_call, res) => res.end('ok'));
    const redirecting = await receiver((_call, res) => {
      res.writeHead(307, { location: target.url });
      res.end();
    });
    const outcome = await send(redirecting.url);
    expect(outcome).toEqual({ status: 307, body: '', error: 'receiver answered HTTP 307' });
    expect(classifyStatus(outcome.status)).toBe('retry');
    expect(target.received).toHaveLength(0);
  });

  it('keeps 1 KB of an oversized answer and drops an endless one at once', async () => {
    let closed = false;
    const endless = await receiver((_call, res) => {
      res.writeHead(200);
      const writing = setInterval(() => res.write('x'.repeat(700)), 1);
      res.on('close', () => {
        closed = true;
        clearInterval(writing);
      });
    });
    const started = Date.now();
    const outcome = await send(endless.url, 5000);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(outcome).toEqual({ status: 200, body: 'x'.repeat(1024), error: null });
    await expect.poll(() => closed).toBe(true);
  });

  it('records a reset or refused connection with its code, and the schedule retries it', async () => {
    const reset = await receiver((_call, res) => res.socket?.destroy());
    const outcome = await send(reset.url);
    expect(outcome).toEqual({ status: null, body: null, error: 'ECONNRESET: socket hang up', timedOut: false });
    expect(classifyStatus(outcome.status)).toBe('retry');
    const port = await freePort();
    expect(await send(`http://127.0.0.1:${port}/hook`)).toEqual({
      status: null,
      body: null,
      error: `ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:${port}`,
      timedOut: false,
    });
  });

  it('fails a header node refuses as a request error, sending nothing', async () => {
    const hook = await receiver((_call, res) => res.end('ok'));
    const refused = loopback.request(hook.url, {
      headers: { authorization: 'a\nb' },
      timeoutMs: 500,
      maxResponseBytes: 10,
    });
    await expect(refused).rejects.toBeInstanceOf(OutboundRequestError);
    await expect(refused).rejects.toMatchObject({ code: 'ERR_INVALID_CHAR' });
    expect(hook.connections).toBe(0);
  });

  it('refuses a caller-set header that frames the message or steers the shared socket, sending nothing', async () => {
    const hook = await receiver((_call, res) => res.end('ok'));
    for (const name of ['Content-Length', 'transfer-encoding', 'Connection', 'expect']) {
      const refused = loopback.request(hook.url, { headers: { [name]: '0' }, timeoutMs: 500, maxResponseBytes: 10 });
      await expect(refused).rejects.toMatchObject({ code: 'ERR_FRAMING_HEADER', timedOut: false });
    }
    expect(hook.connections).toBe(0);
  });

  it('speaks TLS to the checked address, naming the host (SNI), and checks its certificate', async () => {
    const named: string[] = [];
    let requests = 0;
    const server = createHttpsServer(
      {
        ...selfSignedCertificate('DNS:hook.test'),
        // The default context serves every name; the callback only records the one asked for.
        SNICallback: (name, done) => {
          named.push(name);
          done(null);
        },
      },
      (_req, res) => {
        requests += 1;
        res.end('ok');
      },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const resolve: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];
      const outbound = new Outbound({ allowCidrs: '127.0.0.1/32', resolve });
      const { port } = server.address() as AddressInfo;
      // Self-signed: refused by the certificate check, as any receiver whose certificate no CA vouches for.
      expect(await send(`https://hook.test:${port}/hook`, 2000, outbound)).toEqual({
        status: null,
        body: null,
        error: 'DEPTH_ZERO_SELF_SIGNED_CERT: self-signed certificate',
        timedOut: false,
      });
      expect(named).toEqual(['hook.test']);
      expect(requests).toBe(0);
    } finally {
      server.close();
    }
  });
});
