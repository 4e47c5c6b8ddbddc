import { expect } from 'vitest';
import type { CatalogField, CatalogFieldType } from '../../src/api/schemas/catalog-fields.js';
import type { Grant } from '../../src/domain/grants.js';
import type { TestResponse, TestService } from '../support/harness.js';

export const validSource = [
  'import json',
  '',
  'def main(inputs):',
  "    return {'total': inputs['count'] * 2}",
  '',
].join('\n');

export function field(
  variableName: string,
  types: CatalogFieldType[] = ['str'],
  extra: Partial<CatalogField> = {},
): CatalogField {
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

/** A body every rule accepts; tests override one field at a time. */
export function codeBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
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

export interface Caller {
  organizationId: string;
  userId: string;
  key: string;
}

let counter = 0;

/** A new organization with one member and one key, made through the operator area. */
export async function newCaller(
  svc: TestService,
  options: { verified?: boolean; grants?: Grant[]; workspaceScoped?: boolean } = {},
): Promise<Caller> {
  counter += 1;
  const org = await svc.admin('POST', '/admin/organizations', {
    name: `org ${counter}`,
    verified: options.verified ?? true,
  });
  expect(org.status).toBe(201);
  const organizationId = String(org.body.id);
  const user = await svc.admin('POST', '/admin/users', {
    email: `user${counter}-${Date.now()}@example.com`,
    name: 'Author',
    organizationId,
  });
  expect(user.status).toBe(201);
  const userId = String(user.body.id);
  let workspaceIds: string[] | undefined;
  if (options.workspaceScoped) {
    const workspace = await svc.admin('POST', `/admin/organizations/${organizationId}/workspaces`, { name: 'ws' });
    expect(workspace.status).toBe(201);
    workspaceIds = [String(workspace.body.id)];
  }
  const key = await svc.admin('POST', '/admin/keys', {
    organizationId,
    userId,
    name: 'k',
    grants: options.grants ?? ['code:full'],
    workspaceIds,
  });
  expect(key.status).toBe(201);
  return { organizationId, userId, key: String(key.body.key) };
}

export function expectError(res: TestResponse, status: number, fieldOrText?: string): void {
  expect(res.status, res.text).toBe(status);
  expect(res.body.statusCode).toBe(status);
  if (fieldOrText) expect(res.text).toContain(fieldOrText);
}

/** The field paths a 400 VALIDATION_ERROR names. */
export function failedFields(res: TestResponse): string[] {
  const metadata = res.body.metadata as { fields?: Array<{ field: string }> } | undefined;
  return (metadata?.fields ?? []).map((f) => f.field);
}
