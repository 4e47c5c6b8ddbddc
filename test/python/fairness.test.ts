import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DISPATCH_MARGIN_MS } from '../../src/python/call-queue.js';
import type { PythonRunnerPool } from '../../src/python/pool.js';
import type { PythonRunRequest } from '../../src/python/types.js';
import { createPool, failed, main, NORMAL } from './pool-helpers.js';

/**
 * One organization's busy code must not queue another organization's call behind it, and its
 * burst is bounded: shown by the pool's counters and the order of events, not by wall-clock.
 * Two servers of four slots: an organization may run 7 calls at once; here it may queue 8.
 */
const MAX_QUEUED = 8;
let pool: PythonRunnerPool;
beforeAll(async () => {
  pool = await createPool({ size: 2, warmServers: 2, concurrencyPerServer: 4, maxQueuedPerOrganization: MAX_QUEUED });
});
afterAll(() => pool.close());

const SPIN_MS = 3000;
const spin = (extra: Partial<PythonRunRequest> = {}): PythonRunRequest => ({
  form: 'main',
  source: main('while True:\n    pass'),
  inputs: {},
  timeoutMs: SPIN_MS,
  organizationId: 'org-a',
  ...extra,
});

describe('fair share and bounds across organizations', () => {
  test("org A's 33 spinning calls: 7 run, 8 queue, the rest are refused; org B is served at once", async () => {
    let firstEnded = 0;
    const first = Array.from({ length: 14 }, () =>
      pool.run(spin()).finally(() => {
        firstEnded += 1;
      }),
    );
    // Queued 8th: it can wait 500 ms at most before it could no longer run its whole timeout.
    const late = pool.run(spin({ deadline: Date.now() + SPIN_MS + DISPATCH_MARGIN_MS + 500 }));
    const refused = Array.from({ length: 18 }, () => pool.run(spin()));
    expect(pool.stats()).toMatchObject({ queued: MAX_QUEUED, dispatched: 7, shed: { organization: 18 } });

    const b = await pool.run({ form: 'main', source: NORMAL, inputs: { a: 1, b: 2 }, organizationId: 'org-b' });
    expect(b).toMatchObject({ ok: true, outputs: { sum: 3 } });
    // B ran while A's first calls still held their slots, and before any of A's queued calls.
    expect(firstEnded).toBe(0);
    expect(pool.stats().dispatched).toBe(8);

    // Refused at once, as retryable back-pressure (the case engine waits and tries again).
    for (const r of await Promise.all(refused)) expect(failed(r)).toMatchObject({ kind: 'busy' });
    // The call whose deadline came while it waited was dropped, never dispatched.
    expect(failed(await late)).toMatchObject({ kind: 'busy', message: expect.stringContaining('deadline') });
    // Every other call ran (to its timeout): none lost.
    for (const r of await Promise.all(first)) expect(failed(r).kind).toBe('timeout');
    const stats = pool.stats();
    expect(stats.peakQueuedPerOrganization).toBe(MAX_QUEUED);
    expect(stats.shed).toEqual({ organization: 18, total: 0, deadline: 1, cancelled: 0 });
    expect(stats.dispatched).toBe(14 + 1);
    expect(stats.timeouts).toBe(14);

    // After the burst, A's refused work goes through on the next try.
    const again = await pool.run({ form: 'main', source: NORMAL, inputs: { a: 2, b: 2 }, organizationId: 'org-a' });
    expect(again).toMatchObject({ ok: true, outputs: { sum: 4 } });
  }, 60_000);

  test('a cancelled caller takes its waiting call out of the queue', async () => {
    const before = pool.stats();
    const running = Array.from({ length: 7 }, () => pool.run(spin({ timeoutMs: 1000 })));
    const controller = new AbortController();
    const waiting = pool.run(spin({ signal: controller.signal }));
    expect(pool.stats().queued).toBe(1);
    controller.abort();
    expect(failed(await waiting).kind).toBe('cancelled');
    await Promise.all(running);
    const after = pool.stats();
    expect(after.dispatched - before.dispatched).toBe(7);
    expect(after.shed.cancelled - before.shed.cancelled).toBe(1);
  }, 60_000);
});
