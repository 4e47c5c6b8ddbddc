import { once } from 'node:events';
import type { Transform } from 'node:stream';
import { finished } from 'node:stream/promises';
import { deflateRawSync, deflateSync, type Zlib } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { post } from '../../src/callbacks/delivery.js';
import { InflateEither } from '../../src/net/inflate-either.js';
import { Outbound } from '../../src/net/outbound.js';
import { Receiver } from './receiver.js';

// Every inflater made is recorded, so a test can see what became of the one behind an InflateEither.
const inflaters = vi.hoisted((): (Transform & Zlib)[] => []);
vi.mock('node:zlib', async (importOriginal) => {
  const zlib = await importOriginal<typeof import('node:zlib')>();
  const recorded =
    <T extends Transform & Zlib>(make: () => T) =>
    (): T => {
      const inflater = make();
      inflaters.push(inflater);
      return inflater;
    };
  return { ...zlib, createInflateRaw: recorded(zlib.createInflateRaw), createUnzip: recorded(zlib.createUnzip) };
});

/** 20 MB of zeros in ~20 KB: an answer that arrives in one read, whole before its first byte is inflated. */
const bomb = deflateRawSync(Buffer.alloc(20_000_000));

// A stream waited on forever is this component broken: the bounded waits fail in seconds, not at the default minute.
describe('InflateEither', () => {
  beforeEach(() => {
    inflaters.length = 0;
  });

  it('reads at its reader’s pace: a bomb nobody reads is not inflated into memory', { timeout: 5000 }, async () => {
    const inflate = new InflateEither();
    inflate.end(bomb);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(inflate.readableLength).toBeLessThanOrEqual(inflate.readableHighWaterMark);
    let total = 0;
    for await (const chunk of inflate) total += (chunk as Buffer).length;
    expect(total).toBe(20_000_000);
  });

  it('ends an empty body empty, without error', async () => {
    const inflate = new InflateEither().resume();
    inflate.end();
    await finished(inflate);
    expect(inflaters).toHaveLength(0);
  });

  it('destroys its inflater when destroyed, mid-stream', async () => {
    const inflate = new InflateEither();
    inflate.write(bomb);
    await once(inflate, 'data');
    inflate.destroy();
    const [inflater] = inflaters;
    await expect.poll(() => inflater!.closed).toBe(true);
    expect(inflater!.bytesWritten).toBeLessThan(bomb.length);
  });

  it('fails with its inflater’s error, mid-stream or at its end', { timeout: 5000 }, async () => {
    const header = deflateSync('x').subarray(0, 2);
    const broken = new InflateEither().resume();
    // A zlib header, then no valid deflate block: the stream is not ended, the error is still ours.
    broken.write(Buffer.concat([header, Buffer.alloc(8, 0xff)]));
    expect(((await once(broken, 'error')) as [Error])[0].message).toMatch(/invalid/);
    const truncated = new InflateEither().resume();
    truncated.end(header);
    expect(((await once(truncated, 'error')) as [Error])[0].message).toBe('unexpected end of file');
  });

  describe('behind the outbound client', () => {
    let hook: Receiver;
    afterEach(() => hook.close());

    it('stops inflating a bomb that arrived whole once the answer’s cap is kept', async () => {
      hook = new Receiver((_call, res) => {
        res.setHeader('content-encoding', 'deflate');
        res.end(bomb);
      });
      await hook.listen();
      const outbound = new Outbound({ allowCidrs: '127.0.0.1/32' });
      expect(await post(outbound, hook.url, '{}', {}, 5000)).toMatchObject({ status: 200, body: '\0'.repeat(1024) });
      const [inflater] = inflaters;
      await expect.poll(() => inflater!.closed).toBe(true);
      // Inflated to its end, it would have read all of it.
      expect(inflater!.bytesWritten).toBeLessThan(bomb.length / 2);
    });
  });
});
