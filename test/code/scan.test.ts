import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { operations } from '../../src/client/index.js';
import { answered, refused, startTestService, type TestService } from '../support/harness.js';
import { codeBody, expectRefused, type CodeNodePatch } from './support.js';

type BadRequest = operations['postApiV1Code']['responses'][400]['content']['application/json'];

/** The violations of a 400 the scan answered; fails the test on any other answer. */
async function violations(
  call: Promise<{ data?: unknown; error?: unknown; response: Response }>,
  text?: string,
): Promise<NonNullable<NonNullable<BadRequest['metadata']>['violations']>> {
  // The status is checked to be 400, so the body is the document's 400 body.
  const error = (await refused(call, 400)) as BadRequest;
  if (text) expect(error.message).toContain(text);
  expect(error.metadata?.violations, JSON.stringify(error)).toBeDefined();
  return error.metadata?.violations ?? [];
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

  const post = (sourceCode: string) => svc.client.POST('/api/v1/code', { body: codeBody({ sourceCode }) });

  it('rejects blocked imports and constructs with their line and column', async () => {
    const found = await violations(
      post(lines('import json', '', 'import subprocess', 'def main(inputs):', "    return {'total': eval('2')}", '')),
      'security scan',
    );
    expect(found).toEqual(
      expect.arrayContaining([
        { line: 3, col: 1, message: expect.stringContaining("'subprocess'") },
        { line: 5, col: 22, message: expect.stringContaining("'eval'") },
      ]),
    );
    for (const v of found) expect(Object.keys(v).sort()).toEqual(['col', 'line', 'message']);
  });

  it('rejects a blocked from-import and a blocked submodule', async () => {
    const found = await violations(
      post(lines('from os import path', 'import http.server', 'def main(inputs):', '    return {}')),
    );
    expect(found).toEqual([
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
      expect((await violations(post(source)))[0]?.message, source).toContain('reserved keyword');
    }
  });

  it('lets main use the SDK object it is given', async () => {
    await answered(
      post(lines('def main(inputs):', "    caseflow.log('hi')", "    return {'total': inputs['count']}")),
      201,
    );
  });

  it('lets an import that is neither allowed nor blocked pass authoring', async () => {
    await answered(post(lines('import numpy', 'def main(inputs):', "    return {'total': int(numpy.sum([1]))}")), 201);
  });

  it('lets a module without main pass authoring', async () => {
    await answered(post(lines('import json', 'VALUE = 1')), 201);
  });

  it('reports a syntax error as a violation with its position', async () => {
    const found = await violations(post(lines('def main(inputs):', '    return {')));
    expect(found[0]).toMatchObject({ line: 2, message: expect.stringContaining('SyntaxError') });
  });

  it('scans on update too and then cuts no version', async () => {
    const { id: codeId } = await answered(post(lines('def main(inputs):', "    return {'total': 1}")), 201);
    const update = (body: CodeNodePatch) =>
      svc.client.PATCH('/api/v1/code/{codeId}', { params: { path: { codeId } }, body });
    const bad = await violations(update({ sourceCode: lines('import os', 'def main(inputs):', '    return {}') }));
    expect(bad).toEqual([{ line: 1, col: 1, message: expect.stringContaining("'os'") }]);
    const next = await answered(update({ name: 'renamed' }), 200);
    expect(next.versionNumber).toBe(2);
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
    await expectRefused(post(lines('def main(inputs):', '    return {}')), 503, 'scanner is unavailable');
    expect(await countNodes()).toBe(before);
  });
});
