import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFor, newCaller } from '../support/keys.js';
import { answered, startTestService, type TestService } from '../support/harness.js';
import {
  created,
  credential,
  expectError,
  expectRefused,
  failedFields,
  newAuthor,
  pngIcon,
  readIntegration,
  type Author,
  type Created,
  type CredentialInput,
} from './support.js';

describe('POST /api/v1/integration/v/{integrationVersionId}/credential', () => {
  let svc: TestService;
  let author: Author;
  let integration: Created;
  const create = (versionId: string, body: CredentialInput, key = author.key) =>
    clientFor(svc, key).POST('/api/v1/integration/v/{integrationVersionId}/credential', {
      params: { path: { integrationVersionId: versionId } },
      body: { credential: body },
    });
  /** Untyped: the refusals send bodies the contract forbids. */
  const post = (versionId: string, body: unknown) =>
    svc.request('POST', `/api/v1/integration/v/${versionId}/credential`, { body, key: author.key });
  beforeAll(async () => {
    svc = await startTestService();
    author = await newAuthor(svc);
    integration = await created(svc, author);
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('creates a credential template and echoes the inputs with defaults filled in', async () => {
    const body = await answered(
      create(
        integration.versionId,
        credential({
          authType: 'custom_header_auth',
          description: 'Header auth',
          inputs: {
            header: {
              displayName: 'Header',
              variableName: 'header',
              type: 'str',
              isSecret: false,
              default: 'X-Api-Key',
              placeholder: 'X-...',
            },
            value: { displayName: 'Value', variableName: 'value', type: 'str', order: 2 },
          },
        }),
      ),
      201,
    );
    expect(body).toMatchObject({
      name: 'API key',
      description: 'Header auth',
      status: 'active',
      icon: pngIcon,
      authType: 'custom_header_auth',
      integrationId: integration.id,
      versionNumber: 1,
      inputs: {
        header: {
          displayName: 'Header',
          variableName: 'header',
          type: 'str',
          order: 1,
          isSecret: false,
          isNullable: true,
          isEditable: true,
          isVisible: true,
          default: 'X-Api-Key',
          placeholder: 'X-...',
        },
        value: {
          displayName: 'Value',
          variableName: 'value',
          type: 'str',
          order: 2,
          isSecret: true,
          isNullable: true,
          isEditable: true,
          isVisible: true,
        },
      },
    });
    for (const key of ['id', 'versionId', 'createdAt'] as const) expect(typeof body[key]).toBe('string');
    expect(Number.isNaN(Date.parse(body.createdAt))).toBe(false);
    expect(body.id).not.toBe(body.versionId);
  });

  it('defaults authType to api_key and answers 409 for a second credential of the same authType', async () => {
    const fresh = await created(svc, author);
    const first = await answered(create(fresh.versionId, credential()), 201);
    expect(first.authType).toBe('api_key');
    await expectRefused(create(fresh.versionId, credential({ name: 'again' })), 409, 'api_key');
    await answered(create(fresh.versionId, credential({ authType: 'jwt' })), 201);
  });

  it('answers 409 after an inline credential of the same authType', async () => {
    const withInline = await created(svc, author, { credential: credential({ authType: 'oauth', inputs: {} }) });
    expect(withInline.createdCredential).not.toBeNull();
    await expectRefused(create(withInline.versionId, credential({ authType: 'oauth', inputs: {} })), 409);
  });

  it('lets only one of two concurrent credentials of the same authType in', async () => {
    const fresh = await created(svc, author);
    const results = await Promise.all(
      Array.from({ length: 4 }, () => create(fresh.versionId, credential({ authType: 'access_token' }))),
    );
    expect(results.map((r) => r.response.status).sort()).toEqual([201, 409, 409, 409]);
  });

  it('answers 404 for the integration id, an unknown version or a malformed id', async () => {
    await expectRefused(create(integration.id, credential()), 404);
    await expectRefused(create(crypto.randomUUID(), credential()), 404);
    await expectRefused(create('not-a-uuid', credential()), 404, 'Integration version not-a-uuid does not exist');
  });

  it('answers 403 for another organization, an unverified organization or a missing grant', async () => {
    const attacker = await newAuthor(svc);
    const other = credential({ authType: 'other' });
    await expectRefused(create(integration.versionId, other, attacker.key), 403, 'another organization');
    const unverified = await newCaller(svc, ['integration:full'], { verified: false });
    await expectRefused(create(integration.versionId, other, unverified.key), 403, 'not verified');
    const reader = await newCaller(svc, ['integration:read']);
    await expectRefused(create(integration.versionId, other, reader.key), 403, 'Integration: Full');
  });

  it.each([
    ['no credential object', {}, 'body.credential'],
    ['a name over 255', { credential: credential({ name: 'n'.repeat(256) }) }, 'body.credential.name'],
    ['a missing icon', { credential: credential({ icon: undefined }) }, 'body.credential.icon'],
    [
      'a description over 2048',
      { credential: credential({ description: 'd'.repeat(2049) }) },
      'body.credential.description',
    ],
    ['an unknown status', { credential: { ...credential(), status: 'paused' } }, 'body.credential.status'],
    [
      'an input whose key is not its variableName',
      { credential: credential({ inputs: { a: { displayName: 'A', variableName: 'b', type: 'str' } } }) },
      'inputs.a.variableName',
    ],
    [
      'an input of an unknown type',
      { credential: { ...credential(), inputs: { a: { displayName: 'A', variableName: 'a', type: 'secret' } } } },
      'inputs.a.type',
    ],
    [
      'an input without displayName',
      { credential: { ...credential(), inputs: { a: { variableName: 'a', type: 'str' } } } },
      'inputs.a.displayName',
    ],
    [
      'a placeholder over 255',
      {
        credential: credential({
          inputs: { a: { displayName: 'A', variableName: 'a', type: 'str', placeholder: 'p'.repeat(256) } },
        }),
      },
      'inputs.a.placeholder',
    ],
    [
      'a default of the wrong type',
      { credential: credential({ inputs: { a: { displayName: 'A', variableName: 'a', type: 'int', default: 'x' } } }) },
      'inputs.a.default',
    ],
  ])('refuses %s with 400 (and creates nothing)', async (_label, body, fieldPath) => {
    const fresh = await created(svc, author);
    const res = await post(fresh.versionId, body);
    expectError(res, 400);
    expect(
      failedFields(res).some((f) => f.includes(fieldPath)),
      JSON.stringify(failedFields(res)),
    ).toBe(true);
    expect((await readIntegration(svc, author.key, fresh.id)).credentials).toEqual([]);
  });
});
