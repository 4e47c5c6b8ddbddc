import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { PythonRunnerPool } from '../../src/python/pool.js';
import { createPool, main } from './pool-helpers.js';

/**
 * Every child is forked from a zygote that never read a request and gets only its
 * own call over its own socket, so code that escapes the policy and walks every
 * frame and every gc-tracked object still finds nothing of another call.
 */
const MARKER = 'other-org-marker-7f3a9c';
let pool: PythonRunnerPool;
beforeAll(async () => {
  // The audit hook off: the attacker has the real interpreter, only the process boundary is left.
  // All 100 calls wait at once, as one organization: the queue bound (fairness.test.ts) is lifted.
  pool = await createPool({ auditHook: false, maxQueuedPerOrganization: 100 });
});
afterAll(() => pool.close());

const SNOOP = main(`real_import = caseflow.log.__globals__["__builtins__"]["__import__"]
sys = real_import("sys")
gc = real_import("gc")
mark = inputs["needle"][::-1]
bmark = mark.encode()
hits = []
def look(v, where):
    if v is mark or v is bmark:
        return
    if isinstance(v, str) and mark in v:
        hits.append(where)
    elif isinstance(v, (bytes, bytearray, memoryview)) and bmark in bytes(v):
        hits.append(where)
f = sys._getframe()
while f is not None:
    for k, v in list(f.f_locals.items()):
        if k not in ("mark", "bmark", "inputs"):
            look(v, "frame " + f.f_code.co_name + "." + k)
    f = f.f_back
for o in gc.get_objects():
    if isinstance(o, dict):
        for v in list(o.values()):
            look(v, "dict")
    elif isinstance(o, (list, tuple)):
        for v in o:
            look(v, "seq")
return {"hits": hits}`);

describe('a child holds nothing of any other call', () => {
  test("frame walk and gc scan under concurrency never see another call's marker", async () => {
    const calls: Array<Promise<Awaited<ReturnType<PythonRunnerPool['run']>>>> = [];
    for (let i = 0; i < 50; i += 1) {
      calls.push(
        pool.run({
          form: 'main',
          source: main('return {"n": len(inputs["secret"])}'),
          inputs: { secret: `${MARKER}-${i}` },
        }),
      );
      // The attacker carries the marker reversed, so its own request does not contain it.
      calls.push(pool.run({ form: 'main', source: SNOOP, inputs: { needle: MARKER.split('').reverse().join('') } }));
    }
    const results = await Promise.all(calls);
    for (let i = 1; i < results.length; i += 2) {
      const r = results[i]!;
      if (!r.ok) throw new Error(`snoop failed: ${r.error.message}`);
      expect(r.outputs).toEqual({ hits: [] });
    }
  });
});
