import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { PythonRunnerPool } from '../../src/python/pool.js';
import { createPool, expectHealthy, failed, main, succeeded } from './pool-helpers.js';

/**
 * Each call has a scratch space of its own, bounded by `scratchMb` and emptied when the call
 * ends: one tenant filling its scratch cannot make another tenant's write fail.
 */
const SCRATCH_MB = 16;
const HOLD_S = 4;
let pool: PythonRunnerPool;
let osOnly: PythonRunnerPool;
beforeAll(async () => {
  // One server, so the calls share it as they would share a busy pool's server.
  pool = await createPool({ size: 1, scratchMb: SCRATCH_MB });
  osOnly = await createPool({ size: 1, scratchMb: SCRATCH_MB, auditHook: false });
});
afterAll(async () => {
  await pool.close();
  await osOnly.close();
});

/** Writes 1 MB files until the scratch is full, keeps them for a while, then lets the error out. */
const FILL = main(`import time
written = 0
try:
    while True:
        with open(f"f{written}", "wb") as f:
            f.write(b"x" * (1 << 20))
        written += 1
except OSError:
    print(written, time.time())
    time.sleep(inputs["hold"])
    raise`);

const WRITE_5MB = main(`import time
with open("mine", "wb") as f:
    f.write(b"y" * (5 << 20))
return {"at": time.time(), "size": len(open("mine", "rb").read())}`);

/** The real `os`, to look at the scratch filesystem itself (the policy is not the boundary). */
const OS = 'os = caseflow.log.__globals__["__builtins__"]["__import__"]("os")\n';

describe('per-call scratch space', () => {
  test("one organization filling its scratch leaves another's writes working", async () => {
    let done = false;
    const filling = pool
      .run({ form: 'main', source: FILL, inputs: { hold: HOLD_S }, organizationId: 'org-a' })
      .finally(() => (done = true));
    // The other organization writes again and again while the first call runs, so some writes
    // surely fall while its scratch is full, however slowly this machine runs the first call.
    const others: Awaited<ReturnType<PythonRunnerPool['run']>>[] = [];
    while (!done) {
      others.push(await pool.run({ form: 'main', source: WRITE_5MB, inputs: {}, organizationId: 'org-b' }));
      await sleep(300);
    }
    const full = await filling;
    for (const other of others) expect(other).toMatchObject({ ok: true, outputs: { size: 5 << 20 } });
    const error = failed(full);
    expect(error.kind).toBe('limit');
    expect(error.message).toMatch(
      new RegExp(
        `^OSError: \\[Errno 28\\] No space left on device.*\\(this call's scratch space is limited to ${SCRATCH_MB} MB\\)$`,
      ),
    );
    const [written, filledAt] = full.stdout.trim().split(' ').map(Number);
    // Its own limit, to the MB (tmpfs counts whole pages, so the last file may not fit).
    expect(written).toBeGreaterThanOrEqual(SCRATCH_MB - 1);
    expect(written).toBeLessThanOrEqual(SCRATCH_MB);
    // Writes of the other organization fell while the first call held a full scratch.
    const during = others.map((o) => Number(succeeded(o).at)).filter((at) => at > filledAt! && at < filledAt! + HOLD_S);
    expect(during.length).toBeGreaterThan(2);
  });

  test('a call sees an empty scratch after a call that filled its own and made it unreadable', async () => {
    const left = await osOnly.run({
      form: 'main',
      source: main(`${OS}os.mkdir("d")
for i in range(${SCRATCH_MB - 2}):
    open(f"d/f{i}", "wb").write(b"x" * (1 << 20))
os.chmod("d", 0)
return {"cwd": os.getcwd()}`),
      inputs: {},
    });
    const { cwd } = succeeded(left);
    const look = main(`${OS}st = os.statvfs(".")
return {"cwd": os.getcwd(), "entries": os.listdir("."), "used": st.f_blocks - st.f_bfree}`);
    // The same slot comes round again within a few calls (a call takes the spare armed on the lowest
    // free slot while the last one ran), nothing of the last call left in it.
    let next: Record<string, unknown> = {};
    for (let i = 0; i < 4 && next.cwd !== cwd; i += 1) {
      next = succeeded(await osOnly.run({ form: 'main', source: look, inputs: {} }));
    }
    expect(next).toEqual({ cwd, entries: [], used: 0 });
    await expectHealthy(osOnly);
  });

  test('each call has the whole limit again, and writes outside it still fail', async () => {
    for (let i = 0; i < 2; i += 1) {
      const r = await pool.run({
        form: 'main',
        source: main(`for i in range(${SCRATCH_MB - 2}):
    open(f"f{i}", "wb").write(b"x" * (1 << 20))
return {"n": ${SCRATCH_MB - 2}}`),
        inputs: {},
      });
      expect(r).toMatchObject({ ok: true, outputs: { n: SCRATCH_MB - 2 } });
    }
    for (const path of ['/tmp/evil', '/tmp/scratch-1/evil']) {
      const r = await pool.run({
        form: 'main',
        source: main(`open("${path}", "w").write("x")\nreturn {}`),
        inputs: {},
      });
      expect(failed(r).message, path).toMatch(/PermissionError/);
    }
  });
});
