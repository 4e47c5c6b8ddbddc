import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newCaller } from '../support/keys.js';
import { startTestService, type TestService } from '../support/harness.js';
import {
  created,
  credential,
  expectError,
  failedFields,
  newAuthor,
  pngIcon,
  type Author,
  type Created,
} from './support.js';

describe('POST /api/v1/integration/v/{integrationVersionId}/credential', () => {
  let svc: TestService;
  let author: Author;
  let integration: Created;
  const post = (versionId: string, body: unknown, key = author.key) =>
    svc.request('POST', `/api/v1/integration/v/${versionId}/credential`, { body, key });
  beforeAll(async () => {
    svc = await startTestService();
    author = await newAuthor(svc);
    integration = await created(svc, author);
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('creates a credential template and echoes the inputs with defaults filled in', async () => {
    const res = await post(integration.versionId, {
      credential: credential({
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
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({
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
    for (const key of ['id', 'versionId', 'createdAt']) expect(typeof res.body[key]).toBe('string');
    expect(Number.isNaN(Date.parse(String(res.body.createdAt)))).toBe(false);
    expect(res.body.id).not.toBe(res.body.versionId);
  });

  it('defaults authType to api_key and answers 409 for a second credential of the same authType', async () => {
    const fresh = await created(svc, author);
    const first = await post(fresh.versionId, { credential: credential() });
    expect(first.status, first.text).toBe(201);
    expect(first.body.authType).toBe('api_key');
    expectError(await post(fresh.versionId, { credential: credential({ name: 'again' }) }), 409, 'api_key');
    expect((await post(fresh.versionId, { credential: credential({ authType: 'jwt' }) })).status).toBe(201);
  });

  it('answers 409 after an inline credential of the same authType', async () => {
    const withInline = await created(svc, author, { credential: credential({ authType: 'oauth', inputs: {} }) });
    expect(withInline.createdCredential).not.toBeNull();
    expectError(await post(withInline.versionId, { credential: credential({ authType: 'oauth', inputs: {} }) }), 409);
  });

  it('lets only one of two concurrent credentials of the same authType in', async () => {
    const fresh = await created(svc, author);
    const results = await Promise.all(
      Array.from({ length: 4 }, () => post(fresh.versionId, { credential: credential({ authType: 'access_token' }) })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
  });

  it('answers 404 for the integration id, an unknown version or a malformed id', async () => {
    expectError(await post(integration.id, { credential: credential() }), 404);
    expectError(await post(crypto.randomUUID(), { credential: credential() }), 404);
    expectError(
      await post('not-a-uuid', { credential: credential() }),
      404,
      'Integration version not-a-uuid does not exist',
    );
  });

  it('answers 403 for another organization, an unverified organization or a missing grant', async () => {
    const attacker = await newAuthor(svc);
    expectError(
      await post(integration.versionId, { credential: credential({ authType: 'other' }) }, attacker.key),
      403,
      'another organization',
    );
    const unverified = await newCaller(svc, ['integration:full'], { verified: false });
    expectError(
      await post(integration.versionId, { credential: credential({ authType: 'other' }) }, unverified.key),
      403,
      'not verified',
    );
    const reader = await newCaller(svc, ['integration:read']);
    expectError(
      await post(integration.versionId, { credential: credential({ authType: 'other' }) }, reader.key),
      403,
      'Integration: Full',
    );
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
    ['an unknown status', { credential: credential({ status: 'paused' }) }, 'body.credential.status'],
    [
      'an input whose key is not its variableName',
      { credential: credential({ inputs: { a: { displayName: 'A', variableName: 'b', type: 'str' } } }) },
      'inputs.a.variableName',
    ],
    [
      'an input of an unknown type',
      { credential: credential({ inputs: { a: { displayName: 'A', variableName: 'a', type: 'secret' } } }) },
      'inputs.a.type',
    ],
    [
      'an input without displayName',
      { credential: credential({ inputs: { a: { variableName: 'a', type: 'str' } } }) },
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
    const detail = await svc.request('GET', `/api/v1/integration/${fresh.id}`, { key: author.key });
    expect(detail.body.credentials).toEqual([]);
  });
});
