import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { PythonRunnerPool } from '../../src/python/pool.js';
import { createPool } from './pool-helpers.js';

let pool: PythonRunnerPool;
beforeAll(async () => {
  pool = await createPool({ size: 1 });
});
afterAll(async () => {
  await pool?.close();
});

const RESERVED = "'caseflow' is a reserved keyword (the injected SDK object) and cannot be defined or assigned";

async function messages(source: string): Promise<string[]> {
  return (await pool.scan(source, 'main')).map((v) => v.message);
}

describe('authoring scan', () => {
  test('clean code passes', async () => {
    expect(
      await pool.scan(
        'import json\n\ndef main(inputs):\n    caseflow.log("x")\n    return {"a": json.dumps(inputs)}\n',
        'main',
      ),
    ).toEqual([]);
  });

  test('blocked imports, with line and column', async () => {
    expect(
      await pool.scan('import json\nimport os\nfrom subprocess import run\nfrom os import path\n', 'main'),
    ).toEqual([
      { line: 2, col: 1, message: "import of 'os' is blocked" },
      { line: 3, col: 1, message: "import of 'subprocess' is blocked" },
      { line: 4, col: 1, message: "import of 'os' is blocked" },
    ]);
  });

  test('an import neither allowed nor blocked passes the scan', async () => {
    expect(await pool.scan('import colorsys\n', 'main')).toEqual([]);
  });

  test.each([
    ['caseflow = 1'],
    ['def caseflow():\n    pass'],
    ['class caseflow:\n    pass'],
    ['import json as caseflow'],
    ['from json import dumps as caseflow'],
    ['def main(caseflow):\n    return {}'],
    ['for caseflow in []:\n    pass'],
    ['with open("x") as caseflow:\n    pass'],
    ['(caseflow := 1)'],
    ['try:\n    pass\nexcept Exception as caseflow:\n    pass'],
    ['def f():\n    global caseflow'],
    ['del caseflow'],
  ])('defining the SDK name is rejected: %s', async (source) => {
    expect(await messages(source)).toContain(RESERVED);
  });

  test('ordinary formatting, annotations and attribute names pass', async () => {
    expect(
      await pool.scan(
        'import operator, string, functools\n\nclass P:\n    __match_args__ = ("x", "y")\n\ndef main(inputs: "dict") -> "dict":\n    a = "{0} {name} {x.real:>8}".format(1, name="n", x=2)\n    b = string.Formatter().get_field("0.real", (1,), {})\n    c = operator.attrgetter("real", "imag")(1)\n    d = getattr(a, "__len__")()\n    return {"a": a, "b": b, "c": c, "d": d, "e": functools.wraps(main)}\n',
        'main',
      ),
    ).toEqual([]);
  });

  test('using the SDK name is fine', async () => {
    expect(await pool.scan('def main(inputs):\n    caseflow.log("hi")\n    return {}\n', 'main')).toEqual([]);
  });

  test.each([
    ['(x for x in []).gi_frame.f_back.f_globals', "access to attribute 'gi_frame' is not allowed"],
    ['().__class__.__mro__[1].__subclasses__()', "access to attribute '__mro__' is not allowed"],
    ['f.__globals__', "access to attribute '__globals__' is not allowed"],
    ['getattr(f, "__globals__")', "access to attribute '__globals__' is not allowed"],
    // A type's __dict__ holds the descriptors of the blocked attributes: __dict__['__globals__'].__get__(f).
    ["type(f).__dict__['__globals__'].__get__(f)", "access to attribute '__dict__' is not allowed"],
    ['vars(type(f))', "call to 'vars' is not allowed"],
    ['__builtins__', "use of '__builtins__' is not allowed"],
    ['exec("1")', "call to 'exec' is not allowed"],
    ['eval("1")', "call to 'eval' is not allowed"],
    ['compile("1", "x", "exec")', "call to 'compile' is not allowed"],
    ['__import__("os")', "call to '__import__' is not allowed"],
    ['"{0.__class__}".format(1)', 'format strings may not access private or internal attributes'],
    ['"{0[__builtins__]}".format(g)', 'format strings may not access private or internal attributes'],
    [
      'string.Formatter().get_field("0.__globals__", (f,), {})',
      'format strings may not access private or internal attributes',
    ],
    ['getattr(f, "__getattribute__")', "access to attribute '__getattribute__' is not allowed"],
    ['operator.attrgetter("x.__globals__")(f)', "access to attribute '__globals__' is not allowed"],
    ['methodcaller("__subclasses__")(object)', "access to attribute '__subclasses__' is not allowed"],
    ['functools.update_wrapper(w, f, assigned=("__globals__",))', "access to attribute '__globals__' is not allowed"],
    [
      'def g(a: "json.dumps.__globals__"):\n    pass',
      "access to attribute '__globals__' is not allowed (in a string annotation)",
    ],
    ['typing.ForwardRef("x.f_back")', "access to attribute 'f_back' is not allowed (in a string annotation)"],
    ['class M:\n    __match_args__ = ("__globals__",)', "match pattern on attribute '__globals__' is not allowed"],
    [
      'class M:\n    __match_args__ = ("__glo" + "bals__",)',
      '__match_args__ must be a tuple of attribute names written out',
    ],
    ['x = 10**10**8', 'constant exponent is too large'],
    ['match x:\n    case str(__class__=c):\n        pass', "match pattern on attribute '__class__' is not allowed"],
    ['from . import x', 'relative imports are not supported'],
  ])('blocked construct: %s', async (source, message) => {
    expect(await messages(source)).toContain(message);
  });

  test('syntax errors come back as violations', async () => {
    const v = await pool.scan('def main(:\n', 'main');
    expect(v).toHaveLength(1);
    expect(v[0]!.message).toMatch(/^SyntaxError/);
  });

  test('script form uses the same rules', async () => {
    expect(await pool.scan('import socket\nresult["x"] = input_data["a"]\n', 'script')).toEqual([
      { line: 1, col: 1, message: "import of 'socket' is blocked" },
    ]);
  });

  test('hostile source (deep nesting) does not break the scanner', async () => {
    const v = await pool.scan('x = ' + '('.repeat(100_000) + ')'.repeat(100_000), 'main');
    expect(v.length).toBeGreaterThan(0);
    expect(await pool.scan('import json', 'main')).toEqual([]);
  });
});
