import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ZodType } from 'zod';
import {
  actionResponse,
  credentialResponse,
  integrationDetailResponse,
  integrationListResponse,
  integrationResponse,
} from '../../src/api/schemas/catalog.js';
import { answered, startTestService, type TestService } from '../support/harness.js';
import { clientFor } from '../support/keys.js';
import {
  action,
  actionCode,
  created,
  credential,
  expectError,
  expectRefused,
  field,
  newAuthor,
  pngIcon,
  readIntegration,
  type ActionInput,
  type ActionPatch,
  type Author,
  type Created,
  type CredentialPatch,
  type IntegrationPatch,
} from './support.js';

describe('catalog versions and reads', () => {
  let svc: TestService;
  let author: Author;
  let base: Created;
  const client = () => clientFor(svc, author.key);
  const detailOf = (integrationId: string) => readIntegration(svc, author.key, integrationId);
  const versionOf = (integrationVersionId: string) =>
    answered(
      client().GET('/api/v1/integration/v/{integrationVersionId}', { params: { path: { integrationVersionId } } }),
      200,
    );
  const addAction = (integrationVersionId: string, body: ActionInput, key = author.key) =>
    clientFor(svc, key).POST('/api/v1/integration/v/{integrationVersionId}/action', {
      params: { path: { integrationVersionId } },
      body: { action: body },
    });
  const patchIntegration = (integrationId: string, integration: IntegrationPatch) =>
    client().PATCH('/api/v1/integration/{integrationId}', {
      params: { path: { integrationId } },
      body: { integration },
    });
  const patchAction = (actionId: string, action: ActionPatch) =>
    client().PATCH('/api/v1/integration/action/{actionId}', { params: { path: { actionId } }, body: { action } });
  const patchCredential = (credentialId: string, credential: CredentialPatch) =>
    client().PATCH('/api/v1/integration/credential/{credentialId}', {
      params: { path: { credentialId } },
      body: { credential },
    });
  /** What the OpenAPI document promises is what came back. */
  const conforms = (schema: ZodType, body: unknown) => {
    const parsed = schema.safeParse(body);
    expect(parsed.success, parsed.error?.message).toBe(true);
  };
  beforeAll(async () => {
    svc = await startTestService();
    author = await newAuthor(svc);
    base = await created(svc, author, { credential: credential() });
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('reads an integration with its actions (with code and fields) and credential templates', async () => {
    const detail = await detailOf(base.id);
    expect(detail).toMatchObject({ id: base.id, versionId: base.versionId, versionNumber: 1, published: false });
    expect(detail).not.toHaveProperty('isBeta');
    expect(detail.actions).toHaveLength(1);
    expect(detail.actions[0]).toMatchObject({
      versionId: base.createdActions[0]?.actionVersionId,
      code: actionCode,
      endpoint: 'https://api.example.com/echo',
    });
    expect(detail.credentials[0]).toMatchObject({
      versionId: base.createdCredential?.credentialVersionId,
      authType: 'api_key',
    });
    conforms(integrationDetailResponse, detail);
    const list = await answered(client().GET('/api/v1/integration'), 200);
    conforms(integrationListResponse, list);
    expect(list.integrations.map((i) => i.id)).toContain(base.id);
  });

  it('cuts a new integration version on update; the earlier version id stays readable', async () => {
    const res = await answered(
      patchIntegration(base.id, { name: 'Renamed', status: 'deprecated', description: 'now described' }),
      200,
    );
    expect(res).toMatchObject({
      id: base.id,
      versionNumber: 2,
      name: 'Renamed',
      status: 'deprecated',
      description: 'now described',
      category: ['utilities'],
    });
    expect(res.versionId).not.toBe(base.versionId);
    conforms(integrationResponse, res);
    expect(await versionOf(base.versionId)).toMatchObject({
      versionId: base.versionId,
      versionNumber: 1,
      name: 'Echo service',
      status: 'active',
    });
    expect(await detailOf(base.id)).toMatchObject({ versionId: res.versionId, name: 'Renamed' });
    const cleared = await answered(patchIntegration(base.id, { description: null }), 200);
    expect(cleared).toMatchObject({ versionNumber: 3, description: null, name: 'Renamed' });
    // A credential can be added on an earlier integration version id too: it names the same integration.
    const cred = await answered(
      client().POST('/api/v1/integration/v/{integrationVersionId}/credential', {
        params: { path: { integrationVersionId: base.versionId } },
        body: { credential: credential({ authType: 'jwt' }) },
      }),
      201,
    );
    expect(cred.integrationId).toBe(base.id);
  });

  it('cuts a new action version, scanning the code again; the old version keeps its code', async () => {
    const actionId = base.createdActions[0]?.actionId ?? '';
    const oldVersionId = base.createdActions[0]?.actionVersionId ?? '';
    await expectRefused(patchAction(actionId, { code: 'import subprocess\n' }), 400, 'security scan');
    const wide = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`p${i}`, field(`p${i}`)]));
    for (const inputs of [
      { text: { ...field('text', ['object']), allowedTypes: [{ type: 'object' as const, typeDefinition: wide }] } },
      { text: { ...field('text', ['object']), typeDefinition: wide } },
    ]) {
      await expectRefused(patchAction(actionId, { inputs }), 400, 'typeDefinition');
    }
    const res = await answered(
      patchAction(actionId, {
        code: "result['echo'] = input_data['text'].upper()\n",
        outputs: { echo: field('echo'), length: field('length', ['int']) },
      }),
      200,
    );
    expect(res).toMatchObject({
      id: actionId,
      versionNumber: 2,
      name: 'Echo',
      endpoint: 'https://api.example.com/echo',
    });
    expect(Object.keys(res.outputs)).toEqual(['echo', 'length']);
    conforms(actionResponse, res);
    const actionVersion = (actionVersionId: string) =>
      answered(
        client().GET('/api/v1/integration/action/v/{actionVersionId}', { params: { path: { actionVersionId } } }),
        200,
      );
    expect(await actionVersion(oldVersionId)).toMatchObject({ versionNumber: 1, code: actionCode });
    expect(await actionVersion(res.versionId)).toMatchObject({ versionNumber: 2 });
    const detail = await detailOf(base.id);
    expect(detail.actions.map((a) => a.versionId)).toEqual([res.versionId]);
    const removed = await answered(patchAction(actionId, { code: null }), 200);
    expect(removed).toMatchObject({ versionNumber: 3, code: null });
  });

  it('cuts a new credential version; authType cannot change', async () => {
    const credentialId = base.createdCredential?.credentialId ?? '';
    const oldVersionId = base.createdCredential?.credentialVersionId ?? '';
    await expectRefused(patchCredential(credentialId, { authType: 'jwt' }), 400, 'authType cannot change');
    const res = await answered(
      patchCredential(credentialId, {
        name: 'Key v2',
        icon: pngIcon,
        inputs: { token: { displayName: 'Token', variableName: 'token', type: 'str' } },
      }),
      200,
    );
    conforms(credentialResponse, res);
    expect(res).toMatchObject({
      id: credentialId,
      versionNumber: 2,
      name: 'Key v2',
      authType: 'api_key',
      inputs: { token: { isSecret: true, order: 1 } },
    });
    const old = await answered(
      client().GET('/api/v1/integration/credential/v/{credentialVersionId}', {
        params: { path: { credentialVersionId: oldVersionId } },
      }),
      200,
    );
    expect(old).toMatchObject({
      versionNumber: 1,
      name: 'API key',
      inputs: { api_key: { type: 'str' } },
    });
  });

  it('answers 400 for an empty update or malformed ids, 404 for unknown ids', async () => {
    // An update without a field is what the document forbids: sent untyped.
    const empty = { body: { integration: {} }, key: author.key };
    expectError(await svc.request('PATCH', `/api/v1/integration/${base.id}`, empty), 400, 'nothing to update');
    await expectRefused(patchIntegration('not-a-uuid', { name: 'x' }), 400, 'path.integrationId');
    await expectRefused(patchIntegration(crypto.randomUUID(), { name: 'x' }), 404);
    await expectRefused(patchAction(crypto.randomUUID(), { name: 'x' }), 404);
    await expectRefused(patchCredential(crypto.randomUUID(), { name: 'x' }), 404);
    for (const path of [
      '/api/v1/integration/',
      '/api/v1/integration/v/',
      '/api/v1/integration/action/v/',
      '/api/v1/integration/credential/v/',
    ]) {
      expectError(await svc.request('GET', `${path}${crypto.randomUUID()}`, { key: author.key }), 404);
      expectError(await svc.request('GET', `${path}nope`, { key: author.key }), 400);
    }
  });

  it('serializes concurrent updates: every one lands on its own version number', async () => {
    const fresh = await created(svc, author);
    const results = await Promise.all(
      Array.from({ length: 4 }, (_, i) => answered(patchIntegration(fresh.id, { name: `n${i}` }), 200)),
    );
    expect(results.map((r) => r.versionNumber).sort()).toEqual([2, 3, 4, 5]);
  });

  it('pages the list newest first', async () => {
    const pager = await newAuthor(svc);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await created(svc, pager, { name: `p${i}` })).id);
    const list = (query: { limit?: number; offset?: number }) =>
      clientFor(svc, pager.key).GET('/api/v1/integration', { params: { query } });
    const first = await answered(list({ limit: 2 }), 200);
    expect(first).toMatchObject({ limit: 2, offset: 0 });
    expect(first.integrations.map((i) => i.id)).toEqual([ids[2], ids[1]]);
    expect((await answered(list({ limit: 2, offset: 2 }), 200)).integrations.map((i) => i.id)).toEqual([ids[0]]);
    expect((await answered(list({}), 200)).limit).toBe(50);
    await expectRefused(list({ limit: 201 }), 400, 'query.limit');
    await expectRefused(list({ offset: -1 }), 400, 'query.offset');
  });

  it('lists actions in the order they were authored, later additions last, whatever their names', async () => {
    const names = ['Zeta', 'Alpha', 'Mid'];
    const fresh = await created(svc, author, { actions: names.map((name) => action({ name, code: undefined })) });
    expect(fresh.createdActions.map((a) => a.name)).toEqual(names);
    await answered(addAction(fresh.versionId, action({ name: 'Aardvark', code: undefined })), 201);
    await answered(patchAction(fresh.createdActions[0]?.actionId ?? '', { name: 'Zulu' }), 200);
    const detail = await detailOf(fresh.id);
    expect(detail.actions.map((a) => a.name)).toEqual(['Zulu', 'Alpha', 'Mid', 'Aardvark']);
    const byVersion = await versionOf(fresh.versionId);
    expect(byVersion.actions.map((a) => a.id)).toEqual(detail.actions.map((a) => a.id));
  });

  it('adds actions to an existing integration, scanned, up to 50', async () => {
    const fresh = await created(svc, author, {
      actions: Array.from({ length: 48 }, (_, i) => action({ name: `a${i}`, code: undefined })),
    });
    const added = await answered(addAction(fresh.versionId, action({ name: 'Added' })), 201);
    conforms(actionResponse, added);
    expect(added).toMatchObject({ integrationId: fresh.id, name: 'Added', versionNumber: 1, code: actionCode });
    await expectRefused(addAction(fresh.versionId, action({ code: 'import subprocess\n' })), 400, 'security scan');
    expectError(
      await svc.request('POST', `/api/v1/integration/v/${fresh.versionId}/action`, {
        body: { action: { name: 'no endpoint' } },
        key: author.key,
      }),
      400,
      'body.action.endpoint',
    );
    const attacker = await newAuthor(svc);
    await expectRefused(addAction(fresh.versionId, action(), attacker.key), 403, 'another organization');
    await expectRefused(addAction(fresh.id, action()), 404);
    await expectRefused(addAction('nope', action()), 404);
    // 49 now: two concurrent additions race for the last place.
    const racing = await Promise.all([
      addAction(fresh.versionId, action({ name: 'r1' })),
      addAction(fresh.versionId, action({ name: 'r2' })),
    ]);
    expect(racing.map((r) => r.response.status).sort()).toEqual([201, 400]);
    expect(JSON.stringify(racing.find((r) => r.response.status === 400)?.error)).toContain('at most 50 actions');
    const detail = await detailOf(fresh.id);
    expect(detail.actions).toHaveLength(50);
  });
});
