import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { PythonRunnerPool } from '../../src/python/pool.js';
import { createPool, expectHealthy, failed, main } from './pool-helpers.js';

/**
 * Attribute names built at run time ('__glo' + 'bals__', bytes decoded, chr joined) are out of the
 * authoring scan's sight, so every way of turning a string into an attribute access is checked in
 * the child (policy, for clear errors: the OS layers stay the boundary, see attacks.test.ts).
 */
let pool: PythonRunnerPool;
beforeAll(async () => {
  pool = await createPool();
});
afterAll(() => pool.close());

async function run(body: string): ReturnType<PythonRunnerPool['run']> {
  return pool.run({ form: 'main', source: main(body), inputs: {} });
}

describe('operator helpers with blocked names', () => {
  test.each([
    ["operator.attrgetter('__glo' + 'bals__')(caseflow.log)", '__globals__'],
    ["operator.attrgetter('x', 'gi_' + 'frame')((i for i in []))", 'gi_frame'],
    ["operator.attrgetter('gi_frame.f_' + 'back')((i for i in []))", 'gi_frame'],
    ["operator.attrgetter('__di' + 'ct__')(caseflow)", '__dict__'],
    [
      "operator.attrgetter(''.join(map(chr, [95, 95, 103, 108, 111, 98, 97, 108, 115, 95, 95])))(caseflow.log)",
      '__globals__',
    ],
    ["operator.methodcaller('__subcl' + 'asses__')(object)", '__subclasses__'],
    ["getattr(caseflow, '__di' + 'ct__')", '__dict__'],
    ['getattr(caseflow.log, bytes([95, 95, 103, 108, 111, 98, 97, 108, 115, 95, 95]).decode())', '__globals__'],
    ["getattr(type, '__getattri' + 'bute__')(type(caseflow.log), '__dict__')", '__getattribute__'],
    ["getattr(object, '__getattri' + 'bute__')(caseflow.log, '__globals__')", '__getattribute__'],
    ["getattr(int, '__m' + 'ro__')", '__mro__'],
    ["getattr(object, '__subcl' + 'asses__')()", '__subclasses__'],
    ["getattr(caseflow.log, '__built' + 'ins__')", '__builtins__'],
  ])('%s is refused', async (expr, name) => {
    const r = await run(`import operator\nreturn {"x": str(${expr})}`);
    expect(failed(r).message).toContain(`access to attribute '${name}' is not allowed in caseflow code`);
  });

  test('vars(), which is __dict__ by another name, is not a builtin', async () => {
    const r = await run('return {"x": str(vars(type(caseflow.log)))}');
    expect(failed(r).message).toBe("NameError: name 'vars' is not defined");
  });

  test('ordinary names still work', async () => {
    const r = await run(
      'import operator\nreturn {"a": operator.attrgetter("real")(3), "b": operator.methodcaller("upper")("x"), "c": operator.attrgetter("real", "imag")(2), "d": operator.itemgetter(1)([1, 2])}',
    );
    expect(r).toMatchObject({ ok: true, outputs: { a: 3, b: 'X', c: [2, 0], d: 2 } });
    await expectHealthy(pool);
  });
});

/** A dunder name the scan cannot see, and the function whose globals hold the real builtins. */
const PREFIX = `import string, collections, functools, operator, typing
G = "_" * 2 + "glo" + "bals" + "_" * 2
T = "{0." + G + "}"
f = caseflow.log
`;
const GLOBALS = '__globals__';
/** From a real function's globals to the real import and `os`: what each exploit did before. */
const OS = '["__builtins__"]["__import__"]("os").name';

describe('format fields and other run-time names reaching dunders', () => {
  test.each([
    ['string.Formatter().get_field', `string.Formatter().get_field("0." + G, (f,), {})[0]${OS}`, 'attribute', GLOBALS],
    [
      'a string.Formatter subclass calling super()',
      `class F(string.Formatter):\n    def get_field(self, name, args, kwargs):\n        return super().get_field(name, args, kwargs)\nx = F().get_field("0." + G, (f,), {})[0]${OS}`,
      'attribute',
      GLOBALS,
    ],
    ['string.Formatter().format', 'string.Formatter().format(T, f)', 'attribute', GLOBALS],
    ['str.format', 'T.format(f)', 'attribute', GLOBALS],
    ['str.format, unbound', 'str.format(T, f)', 'attribute', GLOBALS],
    ['str.format_map', '("{f." + G + "}").format_map({"f": f})', 'attribute', GLOBALS],
    [
      'an index path into a dunder key',
      '("{0[" + "_" * 2 + "builtins" + "_" * 2 + "]}").format(f.__globals__)',
      'item',
      '__builtins__',
    ],
    ['a field nested in the format spec', '("{0:{1." + G + "}}").format(1, f)', 'attribute', GLOBALS],
    ['a bytes-decoded template', 'bytes(T, "ascii").decode().format(f)', 'attribute', GLOBALS],
    ['getattr(template, "format")', 'getattr(T, "for" + "mat")(f)', 'attribute', GLOBALS],
    ['operator.methodcaller("format")', 'operator.methodcaller("format", f)(T)', 'attribute', GLOBALS],
    ['operator.attrgetter("format")', 'operator.attrgetter("format")(T)(f)', 'attribute', GLOBALS],
    ['functools.partial(str.format)', 'functools.partial(str.format, T)(f)', 'attribute', GLOBALS],
    ['collections.UserString.format', 'collections.UserString(T).format(f)', 'attribute', GLOBALS],
    [
      'functools.update_wrapper with assigned names',
      `class W:\n    got = []\n    def __setattr__(self, k, v):\n        W.got.append(v)\nfunctools.update_wrapper(W(), f, assigned=(G,), updated=())\nx = W.got[0]${OS}`,
      'attribute',
      GLOBALS,
    ],
    [
      'typing evaluating an annotation string',
      `x = typing.ForwardRef("caseflow.log." + G)._evaluate(globals(), None, frozenset())${OS}`,
      'attribute',
      GLOBALS,
    ],
  ])('%s is refused', async (_, body, what, name) => {
    const expr = body.includes('\n') || body.startsWith('x = ') ? body : `x = ${body}`;
    const r = await run(`${PREFIX}${expr}\nreturn {"x": str(x)}`);
    expect(failed(r).message).toMatch(`AttributeError: access to ${what} '${name}' is not allowed in caseflow code`);
  });

  test.each([
    ['in a module', 'typing.ForwardRef("os", module="uuid")._evaluate(None, None, frozenset()).name'],
    [
      'in a fresh namespace (real builtins)',
      `typing.ForwardRef("getattr")._evaluate({}, None, frozenset())(f, G)${OS}`,
    ],
  ])('typing evaluating an annotation %s is refused', async (_, expr) => {
    const r = await run(`${PREFIX}return {"x": str(${expr})}`);
    expect(failed(r).message).toBe(
      'RuntimeError: caseflow code may evaluate string annotations only in its own namespace',
    );
  });

  test('ordinary formatting still works', async () => {
    const r = await run(`import string, collections, functools, typing
name = "n"
def deco(fn):
    @functools.wraps(fn)
    def inner(*a):
        return fn(*a)
    return inner
@deco
def typed(a: "int") -> "str":
    return str(a)
class Report:
    def format(self, width):
        return "r" * width
class Shout(str):
    def format(self, *args):
        return "<" + str.format(self, *args) + ">"
return {
    "own_method": Report().format(2),
    "str_subclass": Shout("{}!").format("a"),
    "positional": "{0} {name}".format(1, name="n"),
    "spec": "{:08.3f}|{:>5}|{!r}".format(3.14159, "x", "y"),
    "fstring": f"{name!r:>6}",
    "map": "{a}-{b[0]}-{c.real}".format_map({"a": 1, "b": [2], "c": 3}),
    "formatter": string.Formatter().format("{0[a]} {x.real}", {"a": 1}, x=5),
    "user_string": collections.UserString("{0}!").format(7),
    "unbound": str.format("{}-{}", 1, 2),
    "bound": getattr("{}", "format")(4),
    "wraps": typed.__name__ + typed(3),
    "hints": str(typing.get_type_hints(typed)),
}`);
    expect(r).toMatchObject({
      ok: true,
      outputs: {
        own_method: 'rr',
        str_subclass: '<a!>',
        positional: '1 n',
        spec: "0003.142|    x|'y'",
        fstring: "   'n'",
        map: '1-2-3',
        formatter: '1 5',
        user_string: '7!',
        unbound: '1-2',
        bound: '4',
        wraps: 'typed3',
        hints: "{'a': <class 'int'>, 'return': <class 'str'>}",
      },
    });
    await expectHealthy(pool);
  });
});
