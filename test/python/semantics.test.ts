import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { PythonRunnerPool } from '../../src/python/pool.js';
import { createPool, failed, main } from './pool-helpers.js';

let pool: PythonRunnerPool;
beforeAll(async () => {
  pool = await createPool();
});
afterAll(async () => {
  await pool?.close();
});

describe('main form', () => {
  test('returns outputs from main(inputs)', async () => {
    const r = await pool.run({
      form: 'main',
      source: main('return {"greeting": "hi " + inputs["name"]}'),
      inputs: { name: 'Ada' },
    });
    expect(r).toMatchObject({ ok: true, outputs: { greeting: 'hi Ada' } });
    expect(r.durationMs).toBeGreaterThan(0);
  });

  test('a module without main fails with the exact message', async () => {
    const r = await pool.run({ form: 'main', source: 'x = 1\n', inputs: {} });
    expect(failed(r)).toEqual({ kind: 'error', message: 'main(inputs) not defined' });
  });

  test('main with named parameters fails with the TypeError', async () => {
    const r = await pool.run({ form: 'main', source: 'def main(a, b):\n    return {}\n', inputs: {} });
    expect(failed(r).message).toMatch(/^TypeError: main\(\) missing 1 required positional argument: 'b'/);
  });

  test('exceptions carry a traceback limited to the customer code', async () => {
    const r = await pool.run({
      form: 'main',
      source: 'def helper():\n    raise ValueError("bad input")\n\ndef main(inputs):\n    helper()\n',
      inputs: {},
    });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.message).toBe('ValueError: bad input');
    expect(r.error.traceback).toContain('line 2, in helper');
    expect(r.error.traceback).not.toContain('runner_server');
  });

  test('syntax errors are reported', async () => {
    const r = await pool.run({ form: 'main', source: 'def main(inputs) return 1', inputs: {} });
    expect(failed(r).message).toMatch(/^SyntaxError/);
  });

  test('the SDK is available inside main only', async () => {
    const r = await pool.run({
      form: 'main',
      source:
        'try:\n    caseflow\n    AT_IMPORT = True\nexcept NameError:\n    AT_IMPORT = False\n\ndef main(inputs):\n    return {"atImport": AT_IMPORT, "inMain": caseflow is not None}\n',
      inputs: {},
    });
    expect(r).toMatchObject({ ok: true, outputs: { atImport: false, inMain: true } });
  });

  test('caseflow.log reaches the result logs; print is captured', async () => {
    const r = await pool.run({
      form: 'main',
      source: main('caseflow.log("starting")\ncaseflow.log("careful", level="warning")\nprint("to stdout")\nreturn {}'),
      inputs: {},
    });
    expect(r.ok).toBe(true);
    expect(r.logs.map((l) => [l.level, l.message])).toEqual([
      ['info', 'starting'],
      ['warning', 'careful'],
    ]);
    expect(r.stdout).toBe('to stdout\n');
  });

  test('caseflow.read_file, file_info and make_file', async () => {
    const url = 'https://files.example/abc';
    const r = await pool.run({
      form: 'main',
      source: main(
        'data = caseflow.read_file(inputs["doc"])\ninfo = caseflow.file_info(inputs["doc"])\n' +
          'out = caseflow.make_file("upper.txt", data.upper(), "text/plain")\n' +
          'return {"text": data.decode(), "size": info["size"], "name": info["name"], "result": out}',
      ),
      inputs: { doc: url },
      files: { [url]: { name: 'a.txt', contentType: 'text/plain', data: Buffer.from('hello') } },
      declaredOutputs: { text: ['str'], size: ['int'], name: ['str'], result: ['file'] },
    });
    expect(r).toMatchObject({
      ok: true,
      outputs: {
        text: 'hello',
        size: 5,
        name: 'a.txt',
        result: {
          $file: { name: 'upper.txt', contentType: 'text/plain', base64: Buffer.from('HELLO').toString('base64') },
        },
      },
    });
  });

  test('reading an unknown file URL is a clear error', async () => {
    const r = await pool.run({
      form: 'main',
      source: main('return {"x": caseflow.read_file("https://nope")}'),
      inputs: {},
    });
    expect(failed(r).message).toMatch(/FileNotFoundError: caseflow.read_file: unknown file URL/);
  });

  test('caseflow.inputs is a read-only view', async () => {
    const r = await pool.run({ form: 'main', source: main('caseflow.inputs["a"] = 2\nreturn {}'), inputs: { a: 1 } });
    expect(failed(r).message).toMatch(/^TypeError: 'mappingproxy' object does not support item assignment/);
  });
});

describe('output checks', () => {
  const declared = { count: ['int' as const], label: ['str' as const] };

  test('matching outputs pass', async () => {
    const r = await pool.run({
      form: 'main',
      source: main('return {"count": 3, "label": "x"}'),
      inputs: {},
      declaredOutputs: declared,
    });
    expect(r.ok).toBe(true);
  });

  test('a wrong type fails', async () => {
    const r = await pool.run({
      form: 'main',
      source: main('return {"count": "3", "label": "x"}'),
      inputs: {},
      declaredOutputs: declared,
    });
    expect(failed(r)).toEqual({ kind: 'output', message: "output 'count' has type str, expected int" });
  });

  test('an undeclared key fails', async () => {
    const r = await pool.run({
      form: 'main',
      source: main('return {"count": 3, "label": "x", "extra": 1}'),
      inputs: {},
      declaredOutputs: declared,
    });
    expect(failed(r).message).toMatch(/output 'extra' is not a declared output/);
  });

  test('a missing declared output fails', async () => {
    const r = await pool.run({
      form: 'main',
      source: main('return {"count": 3}'),
      inputs: {},
      declaredOutputs: declared,
    });
    expect(failed(r).message).toMatch(/did not return declared output\(s\): label/);
  });

  test('main must return a dict', async () => {
    const r = await pool.run({ form: 'main', source: main('return [1]'), inputs: {} });
    expect(failed(r)).toEqual({ kind: 'output', message: 'main() must return a dict, got list' });
  });

  test('type names of the spec are checked', async () => {
    const r = await pool.run({
      form: 'main',
      source: main(
        'import datetime\nreturn {"f": 1, "b": True, "o": {}, "a": [1], "d": datetime.date(2024, 1, 2), "j": "[1]", "n": None}',
      ),
      inputs: {},
      declaredOutputs: {
        f: ['float'],
        b: ['bool'],
        o: ['object'],
        a: ['array'],
        d: ['date'],
        j: ['json_string'],
        n: ['str'],
      },
    });
    expect(r).toMatchObject({
      ok: true,
      outputs: { f: 1, b: true, o: {}, a: [1], d: '2024-01-02', j: '[1]', n: null },
    });
    const bad = await pool.run({
      form: 'main',
      source: main('return {"j": "{not json"}'),
      inputs: {},
      declaredOutputs: { j: ['json_string'] },
    });
    expect(failed(bad).kind).toBe('output');
  });

  test('outputs over 1 MB fail; stdout over 1 MB is truncated', async () => {
    const big = await pool.run({ form: 'main', source: main('return {"x": "a" * (2 * 1024 * 1024)}'), inputs: {} });
    expect(failed(big)).toMatchObject({ kind: 'output' });
    const noisy = await pool.run({
      form: 'main',
      source: main('print("b" * (3 * 1024 * 1024))\nreturn {}'),
      inputs: {},
    });
    expect(noisy.ok).toBe(true);
    expect(noisy.stdout.length).toBeLessThan(1024 * 1024 + 100);
    expect(noisy.stdout).toContain('[output truncated at 1 MB]');
  });
});

describe('script form', () => {
  test('runs at module level with input_data and credential_value, returns result', async () => {
    const r = await pool.run({
      form: 'script',
      source: 'import base64\nresult["auth"] = "Bearer " + credential_value\nresult["n"] = input_data["n"] * 2\n',
      inputs: { n: 21 },
      credentialValue: 'tok',
    });
    expect(r).toMatchObject({ ok: true, outputs: { auth: 'Bearer tok', n: 42 } });
  });

  test('the SDK is not injected in script form', async () => {
    const r = await pool.run({ form: 'script', source: 'result["x"] = caseflow', inputs: {} });
    expect(failed(r).message).toBe("NameError: name 'caseflow' is not defined");
  });
});

describe('import policy at run time', () => {
  test('allowed modules work (proxied)', async () => {
    const r = await pool.run({
      form: 'main',
      source: main(
        'import json, re, dataclasses, collections\nfrom xml.etree import ElementTree as ET\n@dataclasses.dataclass\nclass P:\n    x: int\nreturn {"j": json.dumps(dataclasses.asdict(P(1))), "t": ET.fromstring("<a>b</a>").text}',
      ),
      inputs: {},
    });
    expect(r).toMatchObject({ ok: true, outputs: { j: '{"x": 1}', t: 'b' } });
  });

  test('a blocked import says so', async () => {
    const r = await pool.run({ form: 'main', source: 'import subprocess\ndef main(i):\n    return {}\n', inputs: {} });
    expect(failed(r).message).toBe("ImportError: import of 'subprocess' is blocked by the caseflow Python policy");
  });

  test('an import neither allowed nor blocked fails at run time with a clear message', async () => {
    const r = await pool.run({ form: 'main', source: 'import colorsys\ndef main(i):\n    return {}\n', inputs: {} });
    expect(failed(r).message).toBe("ImportError: module 'colorsys' is not on the caseflow Python allowlist");
  });

  test('a network module without network access says why', async () => {
    const r = await pool.run({
      form: 'main',
      source: 'import urllib.request\ndef main(i):\n    return {}\n',
      inputs: {},
    });
    expect(failed(r).message).toMatch(/needs network access/);
  });
});
