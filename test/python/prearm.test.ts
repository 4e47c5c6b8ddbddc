import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { PythonRunnerPool } from '../../src/python/pool.js';
import { createPool, descendants, failed, main, succeeded, until } from './pool-helpers.js';

/**
 * While calls come, each server keeps a child forked and contained ahead of the next call (a
 * spare): the call only narrows its limits and hands it the request. Each child still serves one
 * call and exits.
 */
let pool: PythonRunnerPool;
let idlePool: PythonRunnerPool;
const IDLE_MS = 300;
beforeAll(async () => {
  // The audit hook off: the code reads its pid and limits with the real interpreter.
  // One slot: every call, and every spare, uses the same scratch slot.
  pool = await createPool({ size: 1, concurrencyPerServer: 1, auditHook: false });
  idlePool = await createPool({ size: 1, concurrencyPerServer: 2, prearmIdleMs: IDLE_MS });
});
afterAll(async () => {
  await pool.close();
  await idlePool.close();
});

const REAL = 'I = caseflow.log.__globals__["__builtins__"]["__import__"]\n';
const PID = main(`${REAL}return {"pid": I("os").getpid()}`);

interface Proc {
  pid: number;
  ppid: number;
  name: string;
  /** Its pid in the sandbox's pid namespace (what os.getpid() says there). */
  innerPid: number;
}

function proc(pid: number): Proc | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, 'm').exec(status)?.[1] ?? '';
    if (field('State').startsWith('Z')) return undefined;
    const nsPids = field('NSpid').split(/\s+/);
    return { pid, ppid: Number(field('PPid')), name: field('Name'), innerPid: Number(nsPids.at(-1)) };
  } catch {
    return undefined; // exited while we looked
  }
}

/** The children of a pool's zygotes (python under python under python): spares, and children running a call. */
function children(p: PythonRunnerPool): Proc[] {
  const tree = new Map<number, Proc>();
  for (const pid of p.stats().pids.flatMap(descendants)) {
    const found = proc(pid);
    if (found) tree.set(pid, found);
  }
  const python = (pid: number | undefined) => pid !== undefined && tree.get(pid)?.name.startsWith('python') === true;
  return [...tree.values()].filter((c) => python(c.pid) && python(c.ppid) && python(tree.get(c.ppid)?.ppid));
}

/** The one spare of an idle one-server pool. */
const onlySpare = (p: PythonRunnerPool) => () => {
  const found = children(p);
  return found.length === 1 ? found[0] : undefined;
};

async function pidOfCall(p: PythonRunnerPool): Promise<number> {
  return succeeded(await p.run({ form: 'main', source: PID, inputs: {} })).pid as number;
}

describe('children armed before the call', () => {
  test('the next call runs in the child armed after the last one; two calls never share a child', async () => {
    const first = await pidOfCall(pool);
    const spare = await until(onlySpare(pool));
    expect(spare.innerPid).not.toBe(first);
    expect(await pidOfCall(pool)).toBe(spare.innerPid);
  });

  test('a spare killed before use is replaced, and the calls go on on the same server', async () => {
    const server = pool.stats().pids;
    await pidOfCall(pool);
    const spare = await until(onlySpare(pool));
    process.kill(spare.pid, 'SIGKILL');
    const replacement = await until(() => children(pool).find((s) => s.pid !== spare.pid));
    expect(await pidOfCall(pool)).toBe(replacement.innerPid);
    expect(pool.stats()).toMatchObject({ pids: server, restarts: 0 });
  });

  test('nothing a call leaves behind reaches the next one (module state, environment, scratch)', async () => {
    const leave = main(`${REAL}I("json").left = inputs["v"]
I("os").environ["LEFT"] = inputs["v"]
open("left", "w").write(inputs["v"])
return {"pid": I("os").getpid()}`);
    const look = main(`${REAL}os = I("os")
return {"pid": os.getpid(), "module": hasattr(I("json"), "left"), "env": os.environ.get("LEFT"), "files": os.listdir(".")}`);
    succeeded(await pool.run({ form: 'main', source: leave, inputs: { v: 'x' } }));
    const spare = await until(onlySpare(pool));
    const seen = succeeded(await pool.run({ form: 'main', source: look, inputs: {} }));
    expect(seen).toEqual({ pid: spare.innerPid, module: false, env: null, files: [] });
  });

  test("the call's own memory and CPU limits reach the child armed before it", async () => {
    const slow = main(`${REAL}I("time").sleep(0.3)\nreturn {"pid": I("os").getpid()}`);
    /** [soft, hard] of a limit of the child running the call (its own code cannot read them: seccomp). */
    const limit = (pid: number, name: string) => {
      const line =
        readFileSync(`/proc/${pid}/limits`, 'utf8')
          .split('\n')
          .find((l) => l.startsWith(name)) ?? '';
      return line.slice(name.length).trim().split(/\s+/).slice(0, 2).map(Number);
    };
    const call = async (memoryMb: number, timeoutMs: number) => {
      const spare = await until(onlySpare(pool));
      const running = pool.run({ form: 'main', source: slow, inputs: {}, memoryMb, timeoutMs });
      // Set by the server before the request is written: CPU last, so both once CPU is a number.
      const cpu = await until(() => {
        const value = limit(spare.pid, 'Max cpu time');
        return value.every(Number.isFinite) ? value : undefined;
      });
      const as = limit(spare.pid, 'Max address space');
      expect(succeeded(await running).pid).toBe(spare.innerPid);
      return { cpu, as };
    };
    await pidOfCall(pool);
    const small = await call(300, 2_000);
    const large = await call(500, 10_000);
    expect(small.cpu).toEqual([3, 4]);
    expect(large.cpu).toEqual([11, 12]);
    expect(small.as[0]).toBe(small.as[1]);
    expect(large.as[0]! - small.as[0]!).toBe(200 << 20);
    const over = await pool.run({ form: 'main', source: main('b = bytearray(400 << 20)\nreturn {}'), inputs: {} });
    expect(failed(over)).toEqual({ kind: 'limit', message: 'memory limit exceeded' });
  });

  test('spares are let go once the server has had no call for a while, and come back with calls', async () => {
    const sum = main('return {"sum": inputs["a"] + 1}');
    await idlePool.run({ form: 'main', source: sum, inputs: { a: 1 } });
    await until(onlySpare(idlePool));
    await until(() => (children(idlePool).length === 0 ? true : undefined));
    expect(await idlePool.run({ form: 'main', source: sum, inputs: { a: 2 } })).toMatchObject({ outputs: { sum: 3 } });
    await until(onlySpare(idlePool));
  });

  test('a timeout kills its own child; the call beside it and the spare are left alone', async () => {
    const spin = idlePool.run({ form: 'main', source: main('while True:\n    pass'), inputs: {}, timeoutMs: 500 });
    const sleepy = idlePool.run({
      form: 'main',
      source: main('import time\ntime.sleep(1)\nreturn {"slept": True}'),
      inputs: {},
      timeoutMs: 5_000,
    });
    expect(failed(await spin).kind).toBe('timeout');
    expect(await sleepy).toMatchObject({ ok: true, outputs: { slept: true } });
  });

  test('a server ended gracefully (recycled) lets its spare go and leaves no process behind', async () => {
    const recycled = await createPool({ size: 1, concurrencyPerServer: 2, recycleAfter: 2 });
    try {
      const [old] = recycled.stats().pids;
      await recycled.run({ form: 'main', source: main('return {}'), inputs: {} });
      // The second call ends the server's turn; while it runs, the server holds the spare armed after it.
      const last = recycled.run({ form: 'main', source: main('import time\ntime.sleep(1)\nreturn {}'), inputs: {} });
      await until(() => (recycled.stats().inFlight === 1 ? true : undefined));
      const running = await until(() => (children(recycled).length === 2 ? children(recycled) : undefined));
      const tree = descendants(old ?? 0);
      expect(await last).toMatchObject({ ok: true });
      await until(() => (tree.some((pid) => proc(pid)) ? undefined : true));
      expect(tree).toEqual(expect.arrayContaining(running.map((c) => c.pid)));
    } finally {
      await recycled.close();
    }
  });
});
