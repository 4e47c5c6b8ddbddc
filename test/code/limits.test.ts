import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogFieldTypes } from '../../src/api/schemas/catalog-fields.js';
import { startTestService, type TestService } from '../support/harness.js';
import {
  codeBody,
  expectError,
  expectRefused,
  failedFields,
  field,
  untypedCodeBody,
  validSource,
  type FieldInput,
} from './support.js';

const SOURCE_BYTES = 262144;
const VARIABLES_JSON_BYTES = 512 * 1024;

/** A valid module of exactly `bytes` UTF-8 bytes, padded with a two-byte character in a comment. */
function sourceOfBytes(bytes: number): string {
  const prefix = `${validSource}#`;
  const rest = bytes - Buffer.byteLength(prefix, 'utf8');
  return prefix + 'a'.repeat(rest % 2) + 'é'.repeat(Math.floor(rest / 2));
}

function manyVariables(count: number): Record<string, FieldInput> {
  const map: Record<string, FieldInput> = {};
  for (let i = 1; i <= count; i++) map[`v${i}`] = field(`v${i}`, ['str'], { id: String(i) });
  return map;
}

/** One variable whose options pad the map's JSON encoding to exactly `bytes`. */
function variablesOfJsonBytes(bytes: number): Record<string, FieldInput> {
  const build = (pad: number) => ({ big: field('big', ['str'], { options: [{ value: 'x'.repeat(pad) }] }) });
  const base = Buffer.byteLength(JSON.stringify(build(0)), 'utf8');
  const map = build(bytes - base);
  expect(Buffer.byteLength(JSON.stringify(map), 'utf8')).toBe(bytes);
  return map;
}

/** An object field whose typeDefinition nests `depth` levels. */
function nested(depth: number): FieldInput {
  let inner = field('leaf');
  for (let i = 0; i < depth; i++) {
    inner = field('node', ['object'], {
      allowedTypes: [{ type: 'object', typeDefinition: { [inner.variableName]: inner } }],
    });
  }
  return inner;
}

function properties(count: number): Record<string, FieldInput> {
  const map: Record<string, FieldInput> = {};
  for (let i = 1; i <= count; i++) map[`p${i}`] = field(`p${i}`);
  return map;
}

const withInput = (f: { variableName: string }) => ({ inputs: { [f.variableName]: f } });

/** [what, body overrides at the limit, body overrides one over, the field path named in the 400] */
const boundaries: Array<[string, Record<string, unknown>, Record<string, unknown>, string]> = [
  ['name 255 characters', { name: 'n'.repeat(255) }, { name: 'n'.repeat(256) }, 'body.name'],
  [
    'description 2048 characters',
    { description: 'd'.repeat(2048) },
    { description: 'd'.repeat(2049) },
    'body.description',
  ],
  ['icon 65535 characters', { icon: 'A'.repeat(65535) }, { icon: 'A'.repeat(65536) }, 'body.icon'],
  [
    'sourceCode 262144 bytes',
    { sourceCode: sourceOfBytes(SOURCE_BYTES) },
    { sourceCode: sourceOfBytes(SOURCE_BYTES + 1) },
    'body.sourceCode',
  ],
  [
    'categories 5 entries',
    { categories: ['a', 'b', 'c', 'd', 'e'] },
    { categories: ['a', 'b', 'c', 'd', 'e', 'f'] },
    'body.categories',
  ],
  ['inputs 100 variables', { inputs: manyVariables(100) }, { inputs: manyVariables(101) }, 'body.inputs'],
  ['outputs 100 variables', { outputs: manyVariables(100) }, { outputs: manyVariables(101) }, 'body.outputs'],
  [
    'inputs 512KB JSON-encoded',
    { inputs: variablesOfJsonBytes(VARIABLES_JSON_BYTES) },
    { inputs: variablesOfJsonBytes(VARIABLES_JSON_BYTES + 1) },
    'body.inputs',
  ],
  [
    'outputs 512KB JSON-encoded',
    { outputs: variablesOfJsonBytes(VARIABLES_JSON_BYTES) },
    { outputs: variablesOfJsonBytes(VARIABLES_JSON_BYTES + 1) },
    'body.outputs',
  ],
  ['tags 20 entries', { tags: Array(20).fill('t') }, { tags: Array(21).fill('t') }, 'body.tags'],
  [
    'options 20 entries',
    { options: Array(20).fill({ label: 'o' }) },
    { options: Array(21).fill({ label: 'o' }) },
    'body.options',
  ],
  [
    'nonEditableFields 20 entries',
    { nonEditableFields: Array(20).fill('name') },
    { nonEditableFields: Array(21).fill('name') },
    'body.nonEditableFields',
  ],
  [
    'allowedTypes 11 entries',
    withInput(field('count', [...catalogFieldTypes])),
    withInput(field('count', [...catalogFieldTypes, 'str'])),
    'body.inputs.count.allowedTypes',
  ],
  [
    'field tags 20 entries',
    withInput(field('count', ['int'], { tags: Array(20).fill('t') })),
    withInput(field('count', ['int'], { tags: Array(21).fill('t') })),
    'body.inputs.count.tags',
  ],
  [
    'field options 20 entries',
    withInput(field('count', ['int'], { options: Array(20).fill({ value: 1 }) })),
    withInput(field('count', ['int'], { options: Array(21).fill({ value: 1 }) })),
    'body.inputs.count.options',
  ],
  [
    'field nonEditableFields 20 entries',
    withInput(field('count', ['int'], { nonEditableFields: Array(20).fill('displayName') })),
    withInput(field('count', ['int'], { nonEditableFields: Array(21).fill('displayName') })),
    'body.inputs.count.nonEditableFields',
  ],
  [
    'typeDefinition 50 entries',
    withInput(field('obj', ['object'], { allowedTypes: [{ type: 'object', typeDefinition: properties(50) }] })),
    withInput(field('obj', ['object'], { allowedTypes: [{ type: 'object', typeDefinition: properties(51) }] })),
    'body.inputs.obj.allowedTypes.0.typeDefinition',
  ],
  ['typeDefinition 10 levels deep', withInput(nested(10)), withInput(nested(11)), 'body.inputs.node'],
  [
    'field description 2048 characters',
    withInput(field('count', ['int'], { description: 'd'.repeat(2048) })),
    withInput(field('count', ['int'], { description: 'd'.repeat(2049) })),
    'body.inputs.count.description',
  ],
];

describe('code node limits, at the boundary and one over', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it.each(boundaries)('%s', async (_what, atLimit, overLimit, fieldPath) => {
    const ok = await svc.request('POST', '/api/v1/code', { body: untypedCodeBody(atLimit) });
    expect(ok.status, ok.text.slice(0, 500)).toBe(201);
    const over = await svc.request('POST', '/api/v1/code', { body: untypedCodeBody(overLimit) });
    expectError(over, 400);
    expect(over.body.errorCode).toBe('VALIDATION_ERROR');
    expect(failedFields(over)).toContain(fieldPath);
  });

  it('counts sourceCode in UTF-8 bytes, not characters', async () => {
    const twoByte = `${validSource}#${'é'.repeat(131072)}`;
    expect(twoByte.length).toBeLessThan(SOURCE_BYTES);
    await expectRefused(
      svc.client.POST('/api/v1/code', { body: codeBody({ sourceCode: twoByte }) }),
      400,
      'bytes UTF-8 encoded',
    );
  });

  it('refuses typeDefinition nested thousands of levels deep with 400, not a crash', async () => {
    // Written as text: JSON.stringify itself overflows the stack at this depth.
    for (const [levels, message] of [
      [3000, 'body nests deeper than 128 levels'],
      [20, 'nests more than 10 levels'],
    ] as const) {
      const open =
        '{"id":"1","variableName":"node","displayName":"n","allowedTypes":[{"type":"object","typeDefinition":{"node":';
      const leaf = '{"id":"1","variableName":"leaf","displayName":"l","allowedTypes":[{"type":"str"}]}';
      const deep = open.repeat(levels) + leaf + '}}]}'.repeat(levels);
      const body = JSON.stringify(codeBody({ inputs: {} })).replace('"inputs":{}', `"inputs":{"node":${deep}}`);
      const res = await svc.request('POST', '/api/v1/code', {
        rawBody: body,
        headers: { 'content-type': 'application/json' },
      });
      expectError(res, 400, message);
    }
    expect((await svc.request('GET', '/healthz', { key: null })).status).toBe(200);
  });

  it('refuses any JSON body nested 200,000 levels deep with 400 on every route, before a handler walks it', async () => {
    const deep = '['.repeat(200_000) + ']'.repeat(200_000);
    for (const path of ['/api/v1/code', '/api/v1/workflow', '/api/v1/case']) {
      // Workflow creation checks its workspace header before the body (contract order): sent valid there.
      const workspace: Record<string, string> =
        path === '/api/v1/workflow' ? { 'x-workspace-id': svc.workspaceId } : {};
      const res = await svc.request('POST', path, {
        rawBody: `{"name":${deep}}`,
        headers: { 'content-type': 'application/json', ...workspace },
      });
      expectError(res, 400, 'body nests deeper than 128 levels');
    }
  });
});

describe('code node variable rules', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => {
    await svc?.stop();
  });

  const post = (overrides: Record<string, unknown>) =>
    svc.request('POST', '/api/v1/code', { body: untypedCodeBody(overrides) });

  it('requires name, sourceCode, inputs and outputs on create', async () => {
    const res = await svc.request('POST', '/api/v1/code', { body: {} });
    expectError(res, 400);
    expect(failedFields(res)).toEqual(
      expect.arrayContaining(['body.name', 'body.sourceCode', 'body.inputs', 'body.outputs']),
    );
    const minimal = await post({ description: undefined, categories: undefined });
    expect(minimal.status, minimal.text).toBe(201);
    expect(minimal.body).toMatchObject({
      description: null,
      icon: null,
      categories: [],
      tags: [],
      options: [],
      nonEditableFields: [],
      versionNumber: 1,
    });
  });

  it('requires each map key to equal its variableName', async () => {
    const res = await post({ inputs: { count: field('amount', ['int']) } });
    expectError(res, 400, "variableName 'amount' must equal its map key 'count'");
    expect(failedFields(res)).toContain('body.inputs.count.variableName');
    expect(failedFields(await post({ outputs: { total: field('sum', ['int']) } }))).toContain(
      'body.outputs.total.variableName',
    );
  });

  it('requires at least one allowedTypes entry of a known type', async () => {
    const empty = await post({ inputs: { count: { ...field('count'), allowedTypes: [] } } });
    expectError(empty, 400, 'at least one allowedTypes entry');
    expect(failedFields(empty)).toContain('body.inputs.count.allowedTypes');
    const unknown = await post({ inputs: { count: { ...field('count'), allowedTypes: [{ type: 'list' }] } } });
    expect(failedFields(unknown)).toContain('body.inputs.count.allowedTypes.0.type');
    const missing = await post({ outputs: { total: { id: '1', variableName: 'total', displayName: 'Total' } } });
    expect(failedFields(missing)).toContain('body.outputs.total.allowedTypes');
  });

  it('requires id, variableName and displayName on every field', async () => {
    const res = await post({ inputs: { count: { allowedTypes: [{ type: 'int' }] } } });
    expect(failedFields(res)).toEqual(
      expect.arrayContaining([
        'body.inputs.count.id',
        'body.inputs.count.variableName',
        'body.inputs.count.displayName',
      ]),
    );
  });

  it('refuses a typeDefinition sent on the field instead of in an allowedTypes entry', async () => {
    const misplaced = { ...field('obj', ['object']), typeDefinition: properties(51) };
    const res = await svc.request('POST', '/api/v1/code', { body: untypedCodeBody(withInput(misplaced)) });
    expectError(res, 400);
    expect(failedFields(res)).toContain('body.inputs.obj.typeDefinition');
  });

  it('keeps typeDefinition to composite types, one key for an array', async () => {
    const onStr = await post(
      withInput(field('s', ['str'], { allowedTypes: [{ type: 'str', typeDefinition: properties(1) }] })),
    );
    expectError(onStr, 400, 'composite types');
    const twoElements = await post(
      withInput(field('a', ['array'], { allowedTypes: [{ type: 'array', typeDefinition: properties(2) }] })),
    );
    expectError(twoElements, 400, 'single-key map');
    const list = await post(
      withInput(
        field('a', ['array'], {
          allowedTypes: [{ type: 'array', typeDefinition: properties(1), typeDefinitionEnforced: true }],
        }),
      ),
    );
    expect(list.status, list.text).toBe(201);
    const inner = await post(
      withInput(
        field('o', ['object'], {
          allowedTypes: [{ type: 'object', typeDefinition: { p: { ...field('p'), allowedTypes: [] } } }],
        }),
      ),
    );
    expect(failedFields(inner)).toContain('body.inputs.o.allowedTypes.0.typeDefinition.p.allowedTypes');
  });

  it('requires a default to match one of allowedTypes', async () => {
    expectError(await post(withInput(field('count', ['int'], { default: 'three' }))), 400, 'default does not match');
    expectError(await post(withInput(field('count', ['int'], { default: 1.5 }))), 400, 'default does not match');
    const ok = await post(withInput(field('count', ['int', 'str'], { default: 'three' })));
    expect(ok.status, ok.text).toBe(201);
    expect((ok.body.inputs as Record<string, FieldInput>).count?.default).toBe('three');
  });

  it('names only real field keys in nonEditableFields', async () => {
    expectError(await post({ nonEditableFields: ['providerId'] }), 400);
    const colour = { ...field('count', ['int']), nonEditableFields: ['colour'] };
    expectError(await post(withInput(colour)), 400);
  });

  it('echoes the stored fields with their defaults filled in', async () => {
    const res = await post({});
    expect(res.status).toBe(201);
    expect(res.body.inputs).toEqual({ count: field('count', ['int']) });
    expect(res.body).toMatchObject({ name: 'Double', sourceCode: validSource, categories: ['math'] });
  });
});
