import { expect } from 'vitest';
import { CatalogRepo } from '../../src/store/catalog-repo.js';
import type { TestService } from '../support/harness.js';
import { field } from '../code/support.js';
import { type Caller, newCaller } from '../support/keys.js';

export { expectError, failedFields, field } from '../code/support.js';

export const pngIcon =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
export const svgIcon = Buffer.from(
  '<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>',
).toString('base64');

export const actionCode = [
  "token = credential_value['api_key']",
  "result['echo'] = input_data['text'] + token[:0]",
  '',
].join('\n');

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
  return {
    name: 'Echo service',
    icon: svgIcon,
    category: ['utilities'],
    providerId,
    actions: [action()],
    ...overrides,
  };
}

/** A verified organization with an Integration: Full key and one provider. */
export interface Author extends Caller {
  providerId: string;
}

export async function newAuthor(svc: TestService, options: Parameters<typeof newCaller>[2] = {}): Promise<Author> {
  const caller = await newCaller(svc, ['integration:full'], options);
  const provider = await svc.request('POST', '/api/v1/provider', { body: { name: 'Acme' }, key: caller.key });
  expect(provider.status, provider.text).toBe(201);
  return { ...caller, providerId: String(provider.body.id) };
}

export async function createIntegration(
  svc: TestService,
  author: Author,
  overrides: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) {
  return svc.request('POST', '/api/v1/integration', {
    body: { integration: integration(author.providerId, overrides) },
    key: author.key,
    headers,
  });
}

export interface Created {
  id: string;
  versionId: string;
  createdActions: Array<{ actionId: string; actionVersionId: string; name: string }>;
  createdCredential: { credentialId: string; credentialVersionId: string; name: string } | null;
}

export async function created(
  svc: TestService,
  author: Author,
  overrides: Record<string, unknown> = {},
): Promise<Created> {
  const res = await createIntegration(svc, author, overrides);
  expect(res.status, res.text).toBe(201);
  return res.body as unknown as Created;
}

/**
 * A creation that fails after the integration and its actions were written
 * (the credential's default cannot be serialized) leaves none of them behind.
 */
export async function expectRollbackHalfWay(svc: TestService, author: Author): Promise<void> {
  const db = svc.service.context.store.db;
  const name = `half-${crypto.randomUUID()}`;
  const draft = {
    providerId: author.providerId,
    content: {
      name,
      description: null,
      icon: pngIcon,
      category: ['a'],
      requiredPlan: 'core' as const,
      status: 'active' as const,
      isNew: false,
      isPopular: false,
      isBeta: false,
    },
    actions: [
      { name: `${name}-action`, endpoint: 'https://x', description: null, inputs: {}, outputs: {}, code: null },
    ],
    credential: {
      name: 'c',
      description: null,
      icon: pngIcon,
      authType: 'api_key' as const,
      status: 'active' as const,
      inputs: {
        k: {
          displayName: 'k',
          variableName: 'k',
          type: 'int' as const,
          order: 1,
          isSecret: true,
          isNullable: true,
          isEditable: true,
          isVisible: true,
          default: 1n,
        },
      },
    },
  };
  const integrationsOf = () =>
    db.selectFrom('integrations').select('id').where('provider_id', '=', author.providerId).execute();
  const before = await integrationsOf();
  await expect(new CatalogRepo(db).createIntegration(author.organizationId, author.userId, draft)).rejects.toThrow(
    /BigInt/,
  );
  expect(await db.selectFrom('integration_versions').select('id').where('name', '=', name).execute()).toEqual([]);
  expect(
    await db.selectFrom('integration_action_versions').select('id').where('name', '=', `${name}-action`).execute(),
  ).toEqual([]);
  expect(await integrationsOf()).toEqual(before);
}
