import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { PythonRunnerPool } from '../../src/python/pool.js';
import { createPool, expectHealthy, failed, main } from './pool-helpers.js';

/** operator.attrgetter / methodcaller are no way around the attribute policy (the OS layers stay the boundary). */
let pool: PythonRunnerPool;
beforeAll(async () => {
  pool = await createPool();
});
afterAll(() => pool.close());

describe('operator helpers with blocked names', () => {
  test.each([
    ["operator.attrgetter('__glo' + 'bals__')(caseflow.log)", '__globals__'],
    ["operator.attrgetter('x', 'gi_' + 'frame')((i for i in []))", 'gi_frame'],
    ["operator.attrgetter('gi_frame.f_' + 'back')((i for i in []))", 'gi_frame'],
    ["operator.attrgetter('__di' + 'ct__')(caseflow)", '__dict__'],
    ["operator.methodcaller('__subcl' + 'asses__')(object)", '__subclasses__'],
    ["getattr(caseflow, '__di' + 'ct__')", '__dict__'],
  ])('%s is refused', async (expr, name) => {
    const r = await pool.run({ form: 'main', source: main(`import operator\nreturn {"x": str(${expr})}`), inputs: {} });
    expect(failed(r).message).toContain(`access to attribute '${name}' is not allowed in caseflow code`);
  });

  test('vars(), which is __dict__ by another name, is not a builtin', async () => {
    const r = await pool.run({ form: 'main', source: main('return {"x": str(vars(type(caseflow.log)))}'), inputs: {} });
    expect(failed(r).message).toBe("NameError: name 'vars' is not defined");
  });

  test('ordinary names still work', async () => {
    const r = await pool.run({
      form: 'main',
      source: main(
        'import operator\nreturn {"a": operator.attrgetter("real")(3), "b": operator.methodcaller("upper")("x")}',
      ),
      inputs: {},
    });
    expect(r).toMatchObject({ ok: true, outputs: { a: 3, b: 'X' } });
    await expectHealthy(pool);
  });
});
