import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFor, newCaller } from '../support/keys.js';
import { answered, startTestService, type TestService } from '../support/harness.js';
import {
  createIntegration,
  created,
  credential,
  expectError,
  newAuthor,
  readIntegration,
  type Author,
  type Created,
} from './support.js';

describe('catalog permissions', () => {
  let svc: TestService;
  let author: Author;
  let mine: Created;
  beforeAll(async () => {
    svc = await startTestService();
    author = await newAuthor(svc);
    mine = await created(svc, author, { credential: credential() });
  });
  afterAll(async () => {
    await svc?.stop();
  });

  const bad = { integration: { name: '', category: 'nope' } };

  it('answers 401 without a key or with a wrong one, on every catalog endpoint', async () => {
    for (const [method, path] of [
      ['POST', '/api/v1/integration'],
      ['GET', '/api/v1/integration'],
      ['POST', '/api/v1/provider'],
      ['GET', '/api/v1/provider'],
      ['GET', `/api/v1/integration/${mine.id}`],
      ['POST', `/api/v1/integration/v/${mine.versionId}/credential`],
    ] as const) {
      const body = method === 'GET' ? undefined : bad;
      expectError(await svc.request(method, path, { body, key: null }), 401);
      expectError(await svc.request(method, path, { body, key: 'cf_nope_nope' }), 401);
    }
  });

  it('refuses an unverified organization with 403 before the body', async () => {
    const caller = await newCaller(svc, ['integration:full'], { verified: false });
    expectError(await svc.request('POST', '/api/v1/integration', { body: bad, key: caller.key }), 403, 'not verified');
    expectError(await svc.request('POST', '/api/v1/provider', { body: {}, key: caller.key }), 403, 'not verified');
    expectError(
      await svc.request('POST', `/api/v1/integration/v/${mine.versionId}/credential`, { body: {}, key: caller.key }),
      403,
      'not verified',
    );
    expectError(
      await svc.request('PATCH', `/api/v1/integration/${mine.id}`, { body: {}, key: caller.key }),
      403,
      'not verified',
    );
  });

  it('reads the body only after the key and the permission: a malformed, too deep or too large body is 401, then 403, then 400/413', async () => {
    const unverified = await newCaller(svc, ['integration:full'], { verified: false });
    const depth = 1000;
    const bodies: Array<[string, string, number, string]> = [
      ['malformed', '{"integration": ', 400, 'MALFORMED_JSON'],
      ['too deep', `{"integration": ${'['.repeat(depth)}${']'.repeat(depth)}}`, 400, 'BAD_REQUEST'],
      ['too large', `{"integration": "${'x'.repeat(3 * 1024 * 1024)}"}`, 413, 'PAYLOAD_TOO_LARGE'],
    ];
    for (const [label, rawBody, status, errorCode] of bodies) {
      for (const path of ['/api/v1/integration', `/api/v1/integration/v/${mine.versionId}/credential`]) {
        const send = (key: string | null) =>
          svc.request('POST', path, { rawBody, headers: { 'content-type': 'application/json' }, key });
        expect((await send(null)).status, `${label} ${path} without a key`).toBe(401);
        const forbidden = await send(unverified.key);
        expect(forbidden.status, `${label} ${path} unverified: ${forbidden.text}`).toBe(403);
        const authored = await send(author.key);
        expect(authored.status, `${label} ${path} author: ${authored.text}`).toBe(status);
        expect(authored.body.errorCode).toBe(errorCode);
      }
    }
  });

  it('refuses a key without Integration: Full with 403 before the body, and Integration: Read can browse but not author', async () => {
    const reader = await newCaller(svc, ['integration:read', 'code:full', 'workflow:full']);
    expectError(
      await svc.request('POST', '/api/v1/integration', { body: bad, key: reader.key }),
      403,
      'Integration: Full',
    );
    expectError(
      await svc.request('POST', '/api/v1/provider', { body: { name: 'x' }, key: reader.key }),
      403,
      'Integration: Full',
    );
    await answered(clientFor(svc, reader.key).GET('/api/v1/integration'), 200);
    const none = await newCaller(svc, ['code:full']);
    expectError(await svc.request('GET', '/api/v1/integration', { key: none.key }), 403, 'Integration: Read');
    expectError(await svc.request('GET', '/api/v1/provider', { key: none.key }), 403, 'Integration: Read');
  });

  it('refuses a workspace-scoped key for authoring even with Integration: Full', async () => {
    const scoped = await newCaller(svc, ['integration:full'], { workspaceScoped: true });
    expectError(
      await svc.request('POST', '/api/v1/integration', { body: bad, key: scoped.key }),
      403,
      'not organization-scoped',
    );
    await answered(clientFor(svc, scoped.key).GET('/api/v1/integration'), 200);
  });

  it("hides another organization's integration from reads (404) and refuses writes to it (403)", async () => {
    const attacker = await newAuthor(svc);
    const readMine = () => readIntegration(svc, author.key, mine.id);
    const detail = await readMine();
    const action = detail.actions[0];
    const cred = detail.credentials[0];
    if (!action || !cred) throw new Error('fixture has an action and a credential');
    for (const path of [
      `/api/v1/integration/${mine.id}`,
      `/api/v1/integration/v/${mine.versionId}`,
      `/api/v1/integration/action/v/${action.versionId}`,
      `/api/v1/integration/credential/v/${cred.versionId}`,
    ]) {
      expectError(await svc.request('GET', path, { key: attacker.key }), 404);
    }
    const list = await answered(clientFor(svc, attacker.key).GET('/api/v1/integration'), 200);
    expect(list.integrations.map((i) => i.id)).not.toContain(mine.id);

    const cred2 = await svc.request('POST', `/api/v1/integration/v/${mine.versionId}/credential`, {
      body: { credential: credential({ authType: 'jwt' }) },
      key: attacker.key,
    });
    expectError(cred2, 403, 'another organization');
    expectError(
      await svc.request('PATCH', `/api/v1/integration/${mine.id}`, {
        body: { integration: { name: 'pwned' } },
        key: attacker.key,
      }),
      403,
      'another organization',
    );
    expectError(
      await svc.request('PATCH', `/api/v1/integration/action/${action.id}`, {
        body: { action: { code: 'result = {}' } },
        key: attacker.key,
      }),
      403,
      'another organization',
    );
    expectError(
      await svc.request('PATCH', `/api/v1/integration/credential/${cred.id}`, {
        body: { credential: { name: 'x' } },
        key: attacker.key,
      }),
      403,
      'another organization',
    );
    // Nothing moved: still version 1 with its own name.
    expect(await readMine()).toMatchObject({ versionNumber: 1, name: 'Echo service' });
  });

  // Every JSON body may be over the size limit: 413 on each POST and PATCH (implied-responses.ts).
  it('documents every catalog operation with its statuses in the OpenAPI document', async () => {
    const doc = (await svc.request('GET', '/openapi.json')).body as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    const expected: Array<[string, string, string[]]> = [
      ['/api/v1/provider', 'post', ['201', '400', '401', '403', '413']],
      ['/api/v1/provider', 'get', ['200', '401', '403']],
      ['/api/v1/integration', 'post', ['201', '400', '401', '403', '409', '422', '503', '413']],
      ['/api/v1/integration', 'get', ['200', '400', '401', '403']],
      [
        '/api/v1/integration/v/{integrationVersionId}/credential',
        'post',
        ['201', '400', '401', '403', '404', '409', '413'],
      ],
      [
        '/api/v1/integration/v/{integrationVersionId}/action',
        'post',
        ['201', '400', '401', '403', '404', '503', '413'],
      ],
      ['/api/v1/integration/{integrationId}', 'get', ['200', '400', '401', '403', '404']],
      ['/api/v1/integration/{integrationId}', 'patch', ['200', '400', '401', '403', '404', '409', '413']],
      ['/api/v1/integration/v/{integrationVersionId}', 'get', ['200', '400', '401', '403', '404']],
      ['/api/v1/integration/action/v/{actionVersionId}', 'get', ['200', '400', '401', '403', '404']],
      ['/api/v1/integration/action/{actionId}', 'patch', ['200', '400', '401', '403', '404', '409', '503', '413']],
      ['/api/v1/integration/credential/v/{credentialVersionId}', 'get', ['200', '400', '401', '403', '404']],
      ['/api/v1/integration/credential/{credentialId}', 'patch', ['200', '400', '401', '403', '404', '409', '413']],
    ];
    for (const [path, method, statuses] of expected) {
      const op = doc.paths[path]?.[method];
      expect(op, `${method} ${path}`).toBeDefined();
      expect(Object.keys(op?.responses ?? {}).sort(), `${method} ${path}`).toEqual(statuses.sort());
    }
  });

  it('checks the body only after the permission: an author with a bad body gets 400', async () => {
    expectError(await createIntegration(svc, author, { category: 'nope' }), 400);
  });
});
