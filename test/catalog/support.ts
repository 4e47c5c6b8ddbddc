import { expect } from 'vitest';
import type { TestService } from '../support/harness.js';
import { field, newCaller, type Caller } from '../code/support.js';

export { expectError, failedFields, field } from '../code/support.js';

export const pngIcon = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
export const svgIcon = Buffer.from('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>').toString('base64');

export const actionCode = ["token = credential_value['api_key']", "result['echo'] = input_data['text'] + token[:0]", ''].join('\n');

export function action(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'Echo',
    endpoint: 'https://api.example.com/echo',
    inputs: { text: field('text') },
    outputs: { echo: field('echo') },
    code: actionCode,
    ...overrides,
  };
}

export function credential(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'API key',
    icon: pngIcon,
    inputs: { api_key: { displayName: 'API key', variableName: 'api_key', type: 'str' } },
    ...overrides,
  };
}

/** An integration body every rule accepts; tests override one field at a time. */
export function integration(providerId: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { name: 'Echo service', icon: svgIcon, category: ['utilities'], providerId, actions: [action()], ...overrides };
}

/** A verified organization with an Integration: Full key and one provider. */
export interface Author extends Caller {
  providerId: string;
}

export async function newAuthor(svc: TestService, options: Parameters<typeof newCaller>[1] = {}): Promise<Author> {
  const caller = await newCaller(svc, { grants: ['integration:full'], ...options });
  const provider = await svc.request('POST', '/api/v1/provider', { body: { name: 'Acme' }, key: caller.key });
  expect(provider.status, provider.text).toBe(201);
  return { ...caller, providerId: String(provider.body.id) };
}

export async function createIntegration(svc: TestService, author: Author, overrides: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  return svc.request('POST', '/api/v1/integration', { body: { integration: integration(author.providerId, overrides) }, key: author.key, headers });
}

export interface Created {
  id: string;
  versionId: string;
  createdActions: Array<{ actionId: string; actionVersionId: string; name: string }>;
  createdCredential: { credentialId: string; credentialVersionId: string; name: string } | null;
}

export async function created(svc: TestService, author: Author, overrides: Record<string, unknown> = {}): Promise<Created> {
  const res = await createIntegration(svc, author, overrides);
  expect(res.status, res.text).toBe(201);
  return res.body as unknown as Created;
}
