import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { PythonRunnerPool } from '../../src/python/pool.js';
import {
  type ContainmentPools,
  type CountingListener,
  startContainmentPools,
  stopContainmentPools,
  expectHealthy,
  failed,
  main,
} from './pool-helpers.js';

/**
 * The attack list, run twice: with every layer (policy gives clear errors),
 * and with the audit-hook policy layer switched off and `os` obtained through
 * a known object-graph escape, to show the OS layers (bwrap, Landlock,
 * seccomp, rlimits, uid nobody) contain each attack on their own.
 */
const SECRET = 'caseflow-test-secret-4d1c';
process.env.CASEFLOW_PYTHON_TEST_SECRET = SECRET;

let pools: ContainmentPools;
let full: PythonRunnerPool;
let osOnly: PythonRunnerPool;
let listener: CountingListener;

beforeAll(async () => {
  pools = await startContainmentPools();
  ({ full, osOnly, listener } = pools);
});
afterAll(() => stopContainmentPools(pools));

/** Reaches the real `os` (and any module) through the SDK function's globals: policy is not a boundary. */
const ESCAPE = 'I = caseflow.log.__globals__["__builtins__"]["__import__"]\nos = I("os")\n';

async function both(
  body: string,
  check: (r: Awaited<ReturnType<PythonRunnerPool['run']>>, layer: string) => void,
  timeoutMs?: number,
): Promise<void> {
  for (const [layer, pool] of [
    ['full', full],
    ['os-only', osOnly],
  ] as const) {
    const r = await pool.run({ form: 'main', source: main(ESCAPE + body), inputs: {}, timeoutMs });
    check(r, layer);
    await expectHealthy(pool);
  }
}

describe('attacks are contained and the pool keeps answering', () => {
  test('host files: /etc/passwd, the project tree, /root', async () => {
    for (const path of ['/etc/passwd', '/etc/shadow', '/work/main/package.json', '/root/.bashrc', '/etc/hostname']) {
      const r = await full.run({
        form: 'main',
        source: main(`return {"x": open(${JSON.stringify(path)}).read()}`),
        inputs: {},
      });
      expect(failed(r).message).toMatch(/FileNotFoundError|PermissionError/);
    }
    // Only the loader files bwrap binds exist in the sandbox's /etc.
    await both('return {"x": sorted(os.listdir("/etc"))}', (r) => {
      expect(r).toMatchObject({ ok: true, outputs: { x: ['ld.so.cache', 'ld.so.conf', 'localtime'] } });
    });
    await expectHealthy(full);
  });

  test("the service's environment and /proc/*/environ", async () => {
    await both('return {"env": dict(os.environ)}', (r) => {
      expect(r.ok).toBe(true);
      expect(JSON.stringify(r)).not.toContain(SECRET);
    });
    await both('return {"x": os.listdir("/proc")}', (r) => expect(failed(r).message).toMatch(/PermissionError/));
    await both('return {"x": open("/proc/1/environ").read()}', (r) =>
      expect(failed(r).message).toMatch(/PermissionError/),
    );
    await both('return {"x": open("/proc/self/environ").read()}', (r) =>
      expect(failed(r).message).toMatch(/PermissionError/),
    );
  });

  test('writes outside the private scratch dir fail; inside it they work', async () => {
    for (const path of ['/tmp/evil', '/usr/evil', '../evil', '/evil', '/dev/shm/evil']) {
      const r = await full.run({
        form: 'main',
        source: main(`open(${JSON.stringify(path)}, "w").write("x")\nreturn {}`),
        inputs: {},
      });
      expect(r.ok, path).toBe(false);
    }
    const ok = await full.run({
      form: 'main',
      source: main('open("note.txt", "w").write("kept")\nreturn {"x": open("note.txt").read()}'),
      inputs: {},
    });
    expect(ok).toMatchObject({ ok: true, outputs: { x: 'kept' } });
    await both('os.mkdir("/tmp/escape")\nreturn {}', (r) => expect(failed(r).message).toMatch(/PermissionError/));
  });

  test('fork bomb', async () => {
    await both('while True:\n    os.fork()', (r, layer) => {
      expect(failed(r).message).toMatch(layer === 'full' ? /os.fork' is not allowed/ : /PermissionError: \[Errno 1\]/);
    });
  });

  test('process execution (os.system, exec)', async () => {
    await both('return {"rc": os.system("id > /tmp/pwned")}', (r, layer) => {
      if (layer === 'full') expect(failed(r).message).toMatch(/os.system' is not allowed/);
      else expect(r).toMatchObject({ ok: true, outputs: { rc: 127 << 8 } });
    });
    await both('os.execv("/usr/bin/id", ["id"])', (r) =>
      expect(failed(r).message).toMatch(/not allowed|PermissionError/),
    );
  });

  test('4 GB allocation', async () => {
    const r = await full.run({ form: 'main', source: main('b = bytearray(4 * 1024 ** 3)\nreturn {}'), inputs: {} });
    expect(failed(r)).toEqual({ kind: 'limit', message: 'memory limit exceeded' });
    await expectHealthy(full);
  });

  test('infinite loop and long sleep hit the wall clock', async () => {
    const loop = await full.run({ form: 'main', source: main('while True:\n    pass'), inputs: {}, timeoutMs: 1000 });
    expect(failed(loop).kind).toBe('timeout');
    expect(loop.durationMs).toBeLessThan(3000);
    const sleep = await full.run({
      form: 'main',
      source: main('import time\ntime.sleep(100)\nreturn {}'),
      inputs: {},
      timeoutMs: 500,
    });
    expect(failed(sleep)).toEqual({ kind: 'timeout', message: 'execution exceeded the time limit of 500 ms' });
    await expectHealthy(full);
  });

  test('10**10**8 is bounded', async () => {
    const r = await full.run({ form: 'main', source: main('return {"x": 10**10**8}'), inputs: {}, timeoutMs: 1500 });
    expect(['timeout', 'limit']).toContain(failed(r).kind);
    await expectHealthy(full);
  });

  test('socket to 127.0.0.1', async () => {
    await both(
      `s = I("socket").socket()\ns.settimeout(2)\ns.connect(("127.0.0.1", ${listener.port}))\nreturn {}`,
      (r, layer) => {
        expect(failed(r).message).toMatch(
          layer === 'full' ? /network access is not enabled/ : /PermissionError: \[Errno 1\]/,
        );
      },
    );
    expect(listener.connections).toBe(0);
  });

  test('ctypes system call and segfault', async () => {
    const blocked = await full.run({ form: 'main', source: main('import ctypes\nreturn {}'), inputs: {} });
    expect(failed(blocked).message).toBe("ImportError: import of 'ctypes' is blocked by the caseflow Python policy");
    await both(
      'c = I("ctypes")\nlibc = c.CDLL(None)\nreturn {"system": libc.system(b"id"), "fork": libc.syscall(57), "unshare": libc.syscall(272, 0x10000000)}',
      (r, layer) => {
        if (layer === 'full') expect(failed(r).message).toMatch(/ctypes is not allowed/);
        else expect(r).toMatchObject({ ok: true, outputs: { system: 127 << 8, fork: -1, unshare: -1 } });
      },
    );
    const crash = await osOnly.run({
      form: 'main',
      source: main(ESCAPE + 'I("ctypes").string_at(0)\nreturn {}'),
      inputs: {},
    });
    expect(failed(crash).message).toMatch(/crashed \(SIGSEGV\)/);
    await expectHealthy(osOnly);
  });

  test('signal/kill the server', async () => {
    const before = [full.stats().restarts, osOnly.stats().restarts];
    await both('os.kill(os.getppid(), 9)\nreturn {}', (r, layer) => {
      expect(failed(r).message).toMatch(layer === 'full' ? /os.kill' is not allowed/ : /PermissionError: \[Errno 1\]/);
    });
    await both('os.kill(1, 9)\nreturn {}', (r) => expect(r.ok).toBe(false));
    expect([full.stats().restarts, osOnly.stats().restarts]).toEqual(before);
  });

  test('frame walk to the harness globals', async () => {
    const src = main('g = (x for x in []).gi_frame.f_back.f_globals\nreturn {"keys": sorted(g)}');
    const r = await full.run({ form: 'main', source: src, inputs: {} });
    expect(failed(r).message).toBe("RuntimeError: access to 'gi_frame' is not allowed in caseflow code");
    // Without the hook the walk succeeds (policy is not the boundary) but what it reaches is still contained.
    const walked = await osOnly.run({
      form: 'main',
      source: main(
        'def gen():\n    yield g.gi_frame.f_back\ng = gen()\nf = next(g)\nwhile "os" not in f.f_globals:\n    f = f.f_back\nos = f.f_globals["os"]\nreturn {"fork": os.fork()}',
      ),
      inputs: {},
    });
    expect(failed(walked).message).toMatch(/PermissionError/);
    await expectHealthy(full);
    await expectHealthy(osOnly);
  });

  test('re-exported os/sys of allowed modules', async () => {
    for (const expr of ['uuid.os', 'typing.sys', 'dataclasses.sys', 'random._os', 'json.decoder.re.enum.sys']) {
      const mod = expr.split('.')[0]!;
      const r = await full.run({ form: 'main', source: main(`import ${mod}\nreturn {"x": str(${expr})}`), inputs: {} });
      expect(failed(r).message, expr).toMatch(/AttributeError/);
    }
    await expectHealthy(full);
  });

  test("'{0.__class__}'.format and friends", async () => {
    expect((await full.scan('x = "{0.__class__}".format(1)', 'main')).length).toBe(1);
    const r = await full.run({
      form: 'main',
      source: main('return {"x": "{0.__class__.__mro__}".format(1)}'),
      inputs: {},
    });
    // Unscanned, the run time refuses it too (policy.test.ts has the rest of the family).
    expect(failed(r).message).toBe(
      "AttributeError: access to attribute '__class__' is not allowed in caseflow code (format field '0.__class__.__mro__')",
    );
    const g = await full.run({
      form: 'main',
      source: main('return {"x": getattr(caseflow, "__init__").__globals__}'),
      inputs: {},
    });
    expect(failed(g).message).toMatch(/not JSON-serializable|not allowed/);
    await expectHealthy(full);
  });
});
