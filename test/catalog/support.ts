import { expect } from 'vitest';
import type { paths } from '../../src/client/index.js';
import { CatalogRepo } from '../../src/store/catalog-repo.js';
import { answered, type TestService } from '../support/harness.js';
import { field } from '../code/support.js';
import { type Caller, clientFor, newCaller } from '../support/keys.js';

export { expectError, expectRefused, failedFields, field } from '../code/support.js';

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

/** The integration a creation sends, as the OpenAPI document types it. */
export type IntegrationInput =
  paths['/api/v1/integration']['post']['requestBody']['content']['application/json']['integration'];
export type ActionInput = NonNullable<IntegrationInput['actions']>[number];
export type CredentialInput = NonNullable<IntegrationInput['credential']>;
/** The updates (at least one field each), as the OpenAPI document types them. */
export type IntegrationPatch =
  paths['/api/v1/integration/{integrationId}']['patch']['requestBody']['content']['application/json']['integration'];
export type ActionPatch =
  paths['/api/v1/integration/action/{actionId}']['patch']['requestBody']['content']['application/json']['action'];
export type CredentialPatch =
  paths['/api/v1/integration/credential/{credentialId}']['patch']['requestBody']['content']['application/json']['credential'];

export function action(overrides: Partial<ActionInput> = {}): ActionInput {
  return {
    name: 'Echo',
    endpoint: 'https://api.example.com/echo',
    inputs: { text: field('text') },
    outputs: { echo: field('echo') },
    code: actionCode,
    ...overrides,
  };
}

export function credential(overrides: Partial<CredentialInput> = {}): CredentialInput {
  return {
    name: 'API key',
    icon: pngIcon,
    inputs: { api_key: { displayName: 'API key', variableName: 'api_key', type: 'str' } },
    ...overrides,
  };
}

/** An integration body every rule accepts; tests override one field at a time. */
export function integration(providerId: string, overrides: Partial<IntegrationInput> = {}): IntegrationInput {
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
  const provider = await answered(clientFor(svc, caller.key).POST('/api/v1/provider', { body: { name: 'Acme' } }), 201);
  return { ...caller, providerId: provider.id };
}

/** Untyped on purpose: tests send overrides the contract refuses and read the 4xx, or check headers. */
export async function createIntegration(
  svc: TestService,
  author: Author,
  overrides: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) {
  return svc.request('POST', '/api/v1/integration', {
    body: { integration: { ...integration(author.providerId), ...overrides } },
    key: author.key,
    headers,
  });
}

/** A created integration (201), with the author's key. */
export async function created(svc: TestService, author: Author, overrides: Partial<IntegrationInput> = {}) {
  return answered(
    clientFor(svc, author.key).POST('/api/v1/integration', {
      body: { integration: integration(author.providerId, overrides) },
    }),
    201,
  );
}

export type Created = Awaited<ReturnType<typeof created>>;

/** An integration's detail (200), read with `key`. */
export function readIntegration(svc: TestService, key: string, integrationId: string) {
  return answered(
    clientFor(svc, key).GET('/api/v1/integration/{integrationId}', { params: { path: { integrationId } } }),
    200,
  );
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
