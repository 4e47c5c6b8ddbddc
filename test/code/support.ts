import { expect } from 'vitest';
import type { components, operations } from '../../src/client/index.js';
import { refused, type TestResponse } from '../support/harness.js';

export const validSource = [
  'import json',
  '',
  'def main(inputs):',
  "    return {'total': inputs['count'] * 2}",
  '',
].join('\n');

/** A field as the OpenAPI document types it in request bodies. */
export type FieldInput = components['schemas']['CatalogFieldInput'];
type FieldType = FieldInput['allowedTypes'][number]['type'];

export function field(variableName: string, types: FieldType[] = ['str'], extra: Partial<FieldInput> = {}): FieldInput {
  return {
    id: '1',
    variableName,
    displayName: variableName,
    allowedTypes: types.map((type) => ({ type })),
    isOptional: false,
    isRemovable: true,
    ...extra,
  };
}

/** A code-node create body as the OpenAPI document types it. */
export type CodeNodeBody = operations['postApiV1Code']['requestBody']['content']['application/json'];
/** A code-node update body (at least one field) as the OpenAPI document types it. */
export type CodeNodePatch = operations['patchApiV1CodeCodeId']['requestBody']['content']['application/json'];

/** A body every rule accepts; tests override one field at a time. */
export function codeBody(overrides: Partial<CodeNodeBody> = {}): CodeNodeBody {
  return {
    name: 'Double',
    description: 'Doubles a count',
    sourceCode: validSource,
    categories: ['math'],
    inputs: { count: field('count', ['int']) },
    outputs: { total: field('total', ['int']) },
    ...overrides,
  };
}

/** codeBody with overrides the document may forbid, sent untyped by the tests of the refusal. */
export function untypedCodeBody(overrides: Record<string, unknown>): Record<string, unknown> {
  return { ...codeBody(), ...overrides };
}

export function expectError(res: TestResponse, status: number, fieldOrText?: string): void {
  expect(res.status, res.text).toBe(status);
  expect(res.body.statusCode).toBe(status);
  if (fieldOrText) expect(res.text).toContain(fieldOrText);
}

/** expectError for a typed client call: a documented refusal with this status, naming `fieldOrText`. */
export async function expectRefused(
  call: Promise<{ data?: unknown; error?: unknown; response: Response }>,
  status: number,
  fieldOrText?: string,
): Promise<void> {
  const error = await refused(call, status);
  expect(error).toMatchObject({ statusCode: status });
  if (fieldOrText) expect(JSON.stringify(error)).toContain(fieldOrText);
}

/** The field paths a 400 VALIDATION_ERROR names. */
export function failedFields(res: TestResponse): string[] {
  const metadata = res.body.metadata as { fields?: Array<{ field: string }> } | undefined;
  return (metadata?.fields ?? []).map((f) => f.field);
}
