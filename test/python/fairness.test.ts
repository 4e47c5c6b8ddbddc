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
    let spinsEnded = 0;
    const spins = Array.from({ length: 32 }, () =>
      pool
        .run({
          form: 'main',
          source: main('while True:\n    pass'),
          inputs: {},
          timeoutMs: 5000,
          organizationId: 'org-a',
        })
        .finally(() => {
          spinsEnded += 1;
        }),
    );
    // Let A's calls take every slot they are allowed before B arrives.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const b = await pool.run({ form: 'main', source: NORMAL, inputs: { a: 1, b: 2 }, organizationId: 'org-b' });
    expect(b).toMatchObject({ ok: true, outputs: { sum: 3 } });
    // B was served while every one of A's runs still held its slot: it did not queue behind A's 5 s timeouts.
    expect(spinsEnded).toBe(0);
    for (const r of await Promise.all(spins)) expect(r.ok).toBe(false);
  }, 60_000);
});
