import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.js';
import { codeBody, expectError } from './support.js';

interface Violation {
  line: number;
  col: number;
  message: string;
}

function violations(body: Record<string, unknown>): Violation[] {
  return (body.metadata as { violations: Violation[] }).violations;
}

const lines = (...source: string[]) => source.join('\n');

describe('the security scan at authoring', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => {
    await svc?.stop();
  });

  const post = (sourceCode: string) => svc.request('POST', '/api/v1/code', { body: codeBody({ sourceCode }) });

  it('rejects blocked imports and constructs with their line and column', async () => {
    const res = await post(
      lines('import json', '', 'import subprocess', 'def main(inputs):', "    return {'total': eval('2')}", ''),
    );
    expectError(res, 400, 'security scan');
    expect(res.body.statusCode).toBe(400);
    const found = violations(res.body);
    expect(found).toEqual(
      expect.arrayContaining([
        { line: 3, col: 1, message: expect.stringContaining("'subprocess'") },
        { line: 5, col: 22, message: expect.stringContaining("'eval'") },
      ]),
    );
    for (const v of found) expect(Object.keys(v).sort()).toEqual(['col', 'line', 'message']);
  });

  it('rejects a blocked from-import and a blocked submodule', async () => {
    const res = await post(lines('from os import path', 'import http.server', 'def main(inputs):', '    return {}'));
    expectError(res, 400);
    expect(violations(res.body)).toEqual([
      { line: 1, col: 1, message: expect.stringContaining("'os'") },
      { line: 2, col: 1, message: expect.stringContaining("'http.server'") },
    ]);
  });

  it('rejects defining or assigning the reserved SDK name as a reserved keyword', async () => {
    for (const source of [
      lines('caseflow = None', 'def main(inputs):', '    return {}'),
      lines('def main(inputs, caseflow=None):', '    return {}'),
      lines('def caseflow():', '    pass', 'def main(inputs):', '    return {}'),
      lines('import json as caseflow', 'def main(inputs):', '    return {}'),
    ]) {
      const res = await post(source);
      expectError(res, 400);
      expect(violations(res.body)[0]?.message, source).toContain('reserved keyword');
    }
  });

  it('lets main use the SDK object it is given', async () => {
    const res = await post(
      lines('def main(inputs):', "    caseflow.log('hi')", "    return {'total': inputs['count']}"),
    );
    expect(res.status, res.text).toBe(201);
  });

  it('lets an import that is neither allowed nor blocked pass authoring', async () => {
    const res = await post(lines('import numpy', 'def main(inputs):', "    return {'total': int(numpy.sum([1]))}"));
    expect(res.status, res.text).toBe(201);
  });

  it('lets a module without main pass authoring', async () => {
    const res = await post(lines('import json', 'VALUE = 1'));
    expect(res.status, res.text).toBe(201);
  });

  it('reports a syntax error as a violation with its position', async () => {
    const res = await post(lines('def main(inputs):', '    return {'));
    expectError(res, 400);
    expect(violations(res.body)[0]).toMatchObject({ line: 2, message: expect.stringContaining('SyntaxError') });
  });

  it('scans on update too and then cuts no version', async () => {
    const created = await post(lines('def main(inputs):', "    return {'total': 1}"));
    expect(created.status).toBe(201);
    const codeId = String(created.body.id);
    const bad = await svc.request('PATCH', `/api/v1/code/${codeId}`, {
      body: { sourceCode: lines('import os', 'def main(inputs):', '    return {}') },
    });
    expectError(bad, 400);
    expect(violations(bad.body)).toEqual([{ line: 1, col: 1, message: expect.stringContaining("'os'") }]);
    const next = await svc.request('PATCH', `/api/v1/code/${codeId}`, { body: { name: 'renamed' } });
    expect(next.status, next.text).toBe(200);
    expect(next.body.versionNumber).toBe(2);
  });

  // Last: it closes this service's pool.
  it('answers 503 and stores nothing when the scanner cannot run', async () => {
    const db = svc.service.context.store.db;
    const countNodes = async () =>
      Number(
        (
          await db
            .selectFrom('code_nodes')
            .select((eb) => eb.fn.countAll<number | string>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const before = await countNodes();
    await svc.service.context.python.close();
    expectError(await post(lines('def main(inputs):', '    return {}')), 503, 'scanner is unavailable');
    expect(await countNodes()).toBe(before);
  });
});
