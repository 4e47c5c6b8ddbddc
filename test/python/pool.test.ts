import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { afterEach, describe, expect, test } from 'vitest';
import { PythonRunnerPool } from '../../src/python/pool.js';
import { configured, createPool, descendants, expectHealthy, failed, main, NORMAL, until } from './pool-helpers.js';

const pools: PythonRunnerPool[] = [];
async function track(p: Promise<PythonRunnerPool>): Promise<PythonRunnerPool> {
  const pool = await p;
  pools.push(pool);
  return pool;
}
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

const SLEEPY = main('import time\ntime.sleep(1)\nreturn {"done": True}');

/** The pid of a server other than `other` once a call is in flight (a replacement, or the network server). */
function runningElsewhere(pool: PythonRunnerPool, other: number): Promise<number> {
  return until(() => {
    const stats = pool.stats();
    return stats.inFlight === 1 ? stats.pids.find((p) => p !== other) : undefined;
  });
}

const inFlight = (pool: PythonRunnerPool) => until(() => (pool.stats().inFlight === 1 ? true : undefined));

describe('pool behaviour', () => {
  test('200 concurrent calls all answer correctly', async () => {
    // All 200 wait at once, as one organization: the queue bounds (fairness.test.ts) are lifted here.
    const pool = await track(createPool({ maxQueuedPerOrganization: 200 }));
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => pool.run({ form: 'main', source: NORMAL, inputs: { a: i, b: 1 } })),
    );
    results.forEach((r, i) =>
      expect(r, r.ok ? '' : `${r.error.kind}: ${r.error.message} ${r.stderr}`).toMatchObject({
        ok: true,
        outputs: { sum: i + 1 },
      }),
    );
    expect(pool.stats()).toMatchObject({ completed: 200, failed: 0, queued: 0, inFlight: 0 });
  });

  test('servers are recycled after K calls without losing calls', async () => {
    const pool = await track(createPool({ size: 1, recycleAfter: 5 }));
    const firstPid = pool.stats().pids[0];
    const results = await Promise.all(
      Array.from({ length: 23 }, () => pool.run({ form: 'main', source: NORMAL, inputs: { a: 1, b: 1 } })),
    );
    expect(results.filter((r) => !r.ok).map((r) => (r.ok ? '' : `${r.error.kind}: ${r.error.message}`))).toEqual([]);
    expect(pool.stats().recycled).toBeGreaterThanOrEqual(4);
    expect(pool.stats().restarts).toBe(0);
    await expectHealthy(pool);
    expect(pool.stats().pids).not.toContain(firstPid);
  });

  test('a dead server is replaced; its in-flight isolated call runs again, once, on the replacement', async () => {
    const pool = await track(createPool({ size: 1 }));
    const pid = pool.stats().pids[0]!;
    const pending = pool.run({ form: 'main', source: SLEEPY, inputs: {}, timeoutMs: 8000 });
    await inFlight(pool);
    process.kill(pid, 'SIGKILL');
    expect(await pending).toMatchObject({ ok: true, outputs: { done: true } });
    expect(pool.stats()).toMatchObject({ restarts: 1, completed: 1, failed: 0 });
    await expectHealthy(pool);
  }, 30_000);

  test('its servers killed a moment apart (every runner killed), an isolated call still runs again on a replacement', async () => {
    const pool = await track(createPool({ size: 2, warmServers: 2, concurrencyPerServer: 2 }));
    const pending = Array.from({ length: 2 }, () =>
      pool.run({ form: 'main', source: SLEEPY, inputs: {}, timeoutMs: 8000 }),
    );
    await until(() => (pool.stats().inFlight === 2 ? true : undefined));
    const [first, second] = pool.stats().pids;
    process.kill(first!, 'SIGKILL');
    // Within the rerun's wait: the call must not have gone to the other server, which dies next.
    await new Promise((r) => setTimeout(r, 100));
    process.kill(second!, 'SIGKILL');
    for (const r of await Promise.all(pending)) expect(r).toMatchObject({ ok: true, outputs: { done: true } });
    await expectHealthy(pool);
  }, 30_000);

  test('a call whose server dies twice fails cleanly', async () => {
    const pool = await track(createPool({ size: 1 }));
    const first = pool.stats().pids[0]!;
    const pending = pool.run({ form: 'main', source: SLEEPY, inputs: {}, timeoutMs: 8000 });
    await inFlight(pool);
    process.kill(first, 'SIGKILL');
    const second = await runningElsewhere(pool, first);
    process.kill(second, 'SIGKILL');
    expect(failed(await pending).kind).toBe('sandbox');
    expect(pool.stats().restarts).toBe(2);
    await expectHealthy(pool);
  }, 30_000);

  test('a network call whose server dies fails cleanly (it may have had effects outside)', async () => {
    const pool = await track(createPool({ size: 1 }));
    const isolated = pool.stats().pids[0]!;
    const pending = pool.run({ form: 'main', source: SLEEPY, inputs: {}, timeoutMs: 8000, network: true });
    const server = await runningElsewhere(pool, isolated);
    process.kill(server, 'SIGKILL');
    expect(failed(await pending).kind).toBe('sandbox');
  }, 30_000);

  test('the watchdog replaces a server that stops answering', async () => {
    const pool = await track(createPool({ size: 1 }));
    const pid = pool.stats().pids[0]!;
    for (const p of descendants(pid)) process.kill(p, 'SIGSTOP');
    const started = Date.now();
    const r = await pool.run({ form: 'main', source: NORMAL, inputs: { a: 1, b: 2 }, timeoutMs: 300 });
    expect(failed(r).kind).toBe('sandbox');
    expect(Date.now() - started).toBeLessThan(10_000);
    await expectHealthy(pool);
    expect(pool.stats().pids).not.toContain(pid);
  }, 30_000);

  test('one warm server at idle: grows to size while calls wait, back to one once idle', async () => {
    const idleServerMs = 500;
    const pool = await track(
      createPool({ size: 3, warmServers: 1, concurrencyPerServer: 2, idleServerMs, maxQueuedPerOrganization: 20 }),
    );
    expect(pool.stats().servers).toBe(1);
    const sleepy = main('import time\ntime.sleep(0.3)\nreturn {"done": True}');
    const results = await Promise.all(
      Array.from({ length: 12 }, () => pool.run({ form: 'main', source: sleepy, inputs: {}, timeoutMs: 8000 })),
    );
    expect(results.filter((r) => !r.ok)).toEqual([]);
    const grown = pool.stats().servers;
    expect(grown).toBeGreaterThanOrEqual(2);
    expect(grown).toBeLessThanOrEqual(3);
    // Polled, not timed: the idle servers end within a few checks.
    for (let i = 0; i < 100 && pool.stats().servers > 1; i++) await new Promise((r) => setTimeout(r, idleServerMs));
    expect(pool.stats()).toMatchObject({ servers: 1, restarts: 0 });
    await expectHealthy(pool);
  }, 60_000);

  test('a crashed child never takes the server down', async () => {
    const pool = await track(createPool({ size: 1, auditHook: false }));
    const pid = pool.stats().pids[0];
    const crash = main(
      'I = caseflow.log.__globals__["__builtins__"]["__import__"]\nI("ctypes").string_at(0)\nreturn {}',
    );
    const results = await Promise.all(
      Array.from({ length: 10 }, () => pool.run({ form: 'main', source: crash, inputs: {} })),
    );
    expect(results.every((r) => !r.ok && r.error.kind === 'error')).toBe(true);
    await expectHealthy(pool);
    expect(pool.stats().pids).toEqual([pid]);
  });
});

describe('hosts without full containment', () => {
  test('refuses to run untrusted code unless the operator opted in', async () => {
    delete process.env.CASEFLOW_PYTHON_ALLOW_UNSANDBOXED;
    const pool = await track(PythonRunnerPool.create({ ...configured, size: 1, bwrapPath: '/nonexistent/bwrap' }));
    const caps = pool.stats().capabilities;
    expect(pool.stats().mode).toBe('refusing');
    expect(caps?.fullContainment).toBe(false);
    expect(caps?.problems.join(' ')).toMatch(/bwrap could not start the sandbox: not found/);
    const r = await pool.run({ form: 'main', source: NORMAL, inputs: { a: 1, b: 1 } });
    expect(failed(r).kind).toBe('sandbox');
    expect(failed(r).message).toMatch(/allowUnsandboxed \/ CASEFLOW_PYTHON_ALLOW_UNSANDBOXED=1/);
    // The authoring scan still works (it runs no customer code).
    expect(await pool.scan('import os', 'main')).toHaveLength(1);
  });

  test('runs when opted in (with whatever layers the host has)', async () => {
    const pool = await track(
      PythonRunnerPool.create({ ...configured, size: 1, bwrapPath: '/nonexistent/bwrap', allowUnsandboxed: true }),
    );
    expect(pool.stats()).toMatchObject({ mode: 'unsandboxed' });
    const r = await pool.run({ form: 'main', source: NORMAL, inputs: { a: 1, b: 1 } });
    expect(r).toMatchObject({ ok: true, outputs: { sum: 2 } });
    // Its scratch slots are directories in the staged runner dir (removed with it at close).
    const scratch = await pool.run({
      form: 'main',
      source: main('open("n", "w").write("kept")\nreturn {"n": open("n").read()}'),
      inputs: {},
    });
    expect(scratch).toMatchObject({ ok: true, outputs: { n: 'kept' } });
  });

  test('a host that refuses prlimit is found at start: said in the log, every call refused saying so, opted in or not', async () => {
    // bwrap under a seccomp filter that refuses prlimit on another process, as a host's security policy may.
    const bwrapPath = fileURLToPath(new URL('./refuse-prlimit.py', import.meta.url));
    for (const allowUnsandboxed of [false, true]) {
      const lines: string[] = [];
      const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
      const pool = await track(
        PythonRunnerPool.create({ ...configured, size: 1, bwrapPath, allowUnsandboxed, logger }),
      );
      expect(pool.stats().capabilities).toMatchObject({ bwrap: true, callLimits: false, fullContainment: false });
      expect(pool.stats()).toMatchObject({ mode: 'refusing' });
      const refusal = lines
        .map((line) => JSON.parse(line) as { level: number; msg: string })
        .find((l) => l.level >= 50);
      expect(refusal?.msg).toMatch(/refuses prlimit: .*Operation not permitted.*Allow the Python servers prlimit/);
      const r = await pool.run({ form: 'main', source: NORMAL, inputs: { a: 1, b: 1 } });
      expect(failed(r)).toMatchObject({ kind: 'sandbox', message: refusal?.msg });
    }
  });
});
