import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { FrameReader, encodeFrame } from '../../src/python/framing.js';
import type { PythonRunnerPool } from '../../src/python/pool.js';
import { createPool, expectHealthy, failed, main, NORMAL } from './pool-helpers.js';

/**
 * Hostile frames in both directions fail their own call only: the runner and
 * every other in-flight call go on.
 */
let pool: PythonRunnerPool;
beforeAll(async () => {
  // The audit hook off, so the hostile child can reach `os` and write raw bytes to its result pipe.
  pool = await createPool({ auditHook: false });
});
afterAll(() => pool.close());

function nested(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i += 1) v = [v];
  return v;
}

/** A child that escapes the policy and writes `payload` (Python bytes literal) to every writable fd it has, then exits. */
function hostileChild(payload: string): string {
  return main(
    'I = caseflow.log.__globals__["__builtins__"]["__import__"]\nos = I("os")\n' +
      `data = ${payload}\n` +
      'for fd in range(3, 64):\n    try:\n        os.write(fd, data)\n    except OSError:\n        pass\n' +
      'os._exit(0)',
  );
}

async function alongsideOthers(
  hostile: Promise<Awaited<ReturnType<PythonRunnerPool['run']>>>,
): Promise<{ kind: string; message: string }> {
  const others = Array.from({ length: 20 }, (_, i) =>
    pool.run({ form: 'main', source: NORMAL, inputs: { a: i, b: 1 } }),
  );
  const [bad, ...good] = await Promise.all([hostile, ...others]);
  good.forEach((r, i) => expect(r).toMatchObject({ ok: true, outputs: { sum: i + 1 } }));
  return failed(bad);
}

describe('hostile frames fail one call only', () => {
  test('Node to Python: inputs nested 3,000 deep', async () => {
    const restarts = pool.stats().restarts;
    const err = await alongsideOthers(pool.run({ form: 'main', source: NORMAL, inputs: { a: nested(3000), b: 1 } }));
    expect(err).toMatchObject({ kind: 'error', message: 'the request could not be parsed (RecursionError)' });
    expect(pool.stats().restarts).toBe(restarts);
    await expectHealthy(pool);
  });

  test('Node to Python: a request over the size limit is refused before it is sent', async () => {
    const restarts = pool.stats().restarts;
    const err = await alongsideOthers(
      pool.run({ form: 'main', source: NORMAL, inputs: { a: 'x'.repeat(65 << 20), b: 1 } }),
    );
    expect(err.message).toMatch(/over the limit of 67108864 bytes/);
    expect(pool.stats().restarts).toBe(restarts);
  });

  test('Python to Node: a hostile child writes deep JSON, non-UTF-8 bytes, a lone surrogate, a giant result', async () => {
    const restarts = pool.stats().restarts;
    const payloads: Array<[string, RegExp]> = [
      ['b\'{"ok":true,"outputs":\' + b"[" * 3000 + b"]" * 3000 + b"}"', /exited without a result/],
      ['b\'{"ok":true,"outputs":{"x":"\\xff\\xfe"}}\'', /exited without a result/],
      ['b\'{"ok":true,"outputs":{"x":"\\\\ud800"}}\'', /result that cannot be returned/],
      ['b\'{"ok":true,"outputs":"\' + b"x" * (25 << 20) + b\'"}\'', /more than 24 MB/],
    ];
    for (const [payload, message] of payloads) {
      const err = await alongsideOthers(pool.run({ form: 'main', source: hostileChild(payload), inputs: {} }));
      expect(err.message).toMatch(message);
    }
    expect(pool.stats().restarts).toBe(restarts);
    await expectHealthy(pool);
  });
});

describe('FrameReader', () => {
  test('decodes frames split at every byte boundary and reports a non-JSON frame without throwing', () => {
    const bad = Buffer.from([0, 0, 0, 2, 0xff, 0xfe]);
    const all = Buffer.concat([encodeFrame({ id: 1, s: 'é' }), bad, encodeFrame({ id: 2 })]);
    const reader = new FrameReader();
    const frames: unknown[] = [];
    for (let i = 0; i < all.length; i += 1) frames.push(...reader.push(all.subarray(i, i + 1)));
    expect(frames).toEqual([{ id: 1, s: 'é' }, { bad: true, message: expect.any(String) }, { id: 2 }]);
  });
});
