import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { encodeRequest } from '../../src/python/framing.js';
import type { PythonRunnerPool } from '../../src/python/pool.js';
import { MAX_REQUEST_BYTES } from '../../src/python/runner-process.js';
import { createPool, failed, main } from './pool-helpers.js';

/** File inputs travel to Python as raw bytes after the request's JSON header, not as base64. */
let pool: PythonRunnerPool;
beforeAll(async () => {
  pool = await createPool({ size: 1 });
});
afterAll(() => pool.close());

const file = (data: Buffer, name = 'f.bin') => ({ name, contentType: 'application/octet-stream', data });
const sha256 = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

describe('file bytes to Python', () => {
  test('a 5 MB random file round-trips byte-exact, as bytes, in a frame smaller than its base64', async () => {
    const data = randomBytes(5 << 20);
    const url = 'https://caseflow.test/files/a';
    const r = await pool.run({
      form: 'main',
      source: main(
        'data = caseflow.read_file(inputs["f"])\n' +
          'return {"type": type(data).__name__, "size": caseflow.file_info(inputs["f"])["size"], "copy": caseflow.make_file("copy.bin", data)}',
      ),
      inputs: { f: url },
      files: { [url]: file(data) },
    });
    if (!r.ok) throw new Error(r.error.message);
    expect(r.outputs).toMatchObject({ type: 'bytes', size: data.length });
    const copy = (r.outputs.copy as { $file: { base64: string } }).$file.base64;
    expect(Buffer.from(copy, 'base64').equals(data)).toBe(true);

    const frame = encodeRequest(
      { id: 1, files: [{ url, name: 'f.bin', contentType: 'application/octet-stream', size: data.length }] },
      [data],
    );
    expect(frame.bodyBytes).toBeLessThan(data.length + 1024);
    expect(frame.bodyBytes).toBeLessThan(data.toString('base64').length);
    // The file's bytes are written as they are: the very buffer, not a copy or an encoding.
    expect(frame.parts.at(-1)).toBe(data);
  });

  test('several files, an empty one included, keep their own bytes and order', async () => {
    const files = {
      'u:1': file(randomBytes(1000), 'one'),
      'u:2': file(Buffer.alloc(0), 'empty'),
      'u:3': file(randomBytes(77), 'three'),
    };
    const r = await pool.run({
      form: 'main',
      source: main(
        'import hashlib\nreturn {u: [caseflow.file_info(u)["name"], hashlib.sha256(caseflow.read_file(u)).hexdigest()] for u in inputs["urls"]}',
      ),
      inputs: { urls: Object.keys(files) },
      files,
    });
    expect(r).toMatchObject({
      ok: true,
      outputs: Object.fromEntries(Object.entries(files).map(([u, f]) => [u, [f.name, sha256(f.data)]])),
    });
  });

  test('a 50 MB file fits the 64 MB request cap (its base64 would not); a larger one is refused before it is sent', async () => {
    const big = randomBytes(50 << 20);
    expect(big.toString('base64').length).toBeGreaterThan(MAX_REQUEST_BYTES);
    const r = await pool.run({
      form: 'main',
      source: main('import hashlib\nreturn {"sha": hashlib.sha256(caseflow.read_file("u")).hexdigest()}'),
      inputs: {},
      files: { u: file(big) },
      memoryMb: 512,
    });
    expect(r).toMatchObject({ ok: true, outputs: { sha: sha256(big) } });

    const tooBig = await pool.run({
      form: 'main',
      source: main('return {}'),
      inputs: {},
      files: { u: file(Buffer.alloc(MAX_REQUEST_BYTES)) },
    });
    expect(failed(tooBig).message).toMatch(/over the limit of 67108864 bytes/);
  });
});
