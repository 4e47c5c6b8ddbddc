import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { PythonRunnerPool } from '../../src/python/pool.js';
import { createPool, main, NORMAL } from './pool-helpers.js';

/** One organization's busy code must not queue another organization's call behind it. */
let pool: PythonRunnerPool;
beforeAll(async () => {
  pool = await createPool();
});
afterAll(() => pool.close());

describe('fair share across organizations', () => {
  test("32 spinning runs of org A do not hold back org B's trivial run", async () => {
    const spins = Array.from({ length: 32 }, () =>
      pool.run({
        form: 'main',
        source: main('while True:\n    pass'),
        inputs: {},
        timeoutMs: 5000,
        organizationId: 'org-a',
      }),
    );
    // Let A's calls take every slot they are allowed before B arrives.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const started = Date.now();
    const b = await pool.run({ form: 'main', source: NORMAL, inputs: { a: 1, b: 2 }, organizationId: 'org-b' });
    const waited = Date.now() - started;
    expect(b).toMatchObject({ ok: true, outputs: { sum: 3 } });
    // A correctness bound (B would otherwise wait for A's 5 s timeouts), not a benchmark.
    expect(waited).toBeLessThan(1500);
    for (const r of await Promise.all(spins)) expect(r.ok).toBe(false);
  }, 60_000);
});
