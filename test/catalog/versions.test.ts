import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ZodType } from 'zod';
import {
  actionResponse,
  credentialResponse,
  integrationDetailResponse,
  integrationListResponse,
  integrationResponse,
} from '../../src/api/schemas/catalog.js';
import { startTestService, type TestService } from '../support/harness.js';
import {
  action,
  actionCode,
  created,
  credential,
  expectError,
  field,
  newAuthor,
  pngIcon,
  type Author,
  type Created,
} from './support.js';

interface Detail {
  id: string;
  versionId: string;
  versionNumber: number;
  name: string;
  published: boolean;
  actions: Array<{
    id: string;
    versionId: string;
    versionNumber: number;
    name: string;
    code: string | null;
    endpoint: string;
  }>;
  credentials: Array<{ id: string; versionId: string; versionNumber: number; name: string; authType: string }>;
}

describe('catalog versions and reads', () => {
  let svc: TestService;
  let author: Author;
  let base: Created;
  const get = async (path: string) => {
    const res = await svc.request('GET', path, { key: author.key });
    expect(res.status, res.text).toBe(200);
    return res.body;
  };
  const patch = (path: string, body: unknown) => svc.request('PATCH', path, { body, key: author.key });
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
    const detail = (await get(`/api/v1/integration/${base.id}`)) as unknown as Detail;
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
    const list = await get('/api/v1/integration');
    conforms(integrationListResponse, list);
    expect((list.integrations as Array<{ id: string }>).map((i) => i.id)).toContain(base.id);
  });

  it('cuts a new integration version on update; the earlier version id stays readable', async () => {
    const res = await patch(`/api/v1/integration/${base.id}`, {
      integration: { name: 'Renamed', status: 'deprecated', description: 'now described' },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      id: base.id,
      versionNumber: 2,
      name: 'Renamed',
      status: 'deprecated',
      description: 'now described',
      category: ['utilities'],
    });
    expect(res.body.versionId).not.toBe(base.versionId);
    conforms(integrationResponse, res.body);
    expect(await get(`/api/v1/integration/v/${base.versionId}`)).toMatchObject({
      versionId: base.versionId,
      versionNumber: 1,
      name: 'Echo service',
      status: 'active',
    });
    expect(await get(`/api/v1/integration/${base.id}`)).toMatchObject({
      versionId: res.body.versionId,
      name: 'Renamed',
    });
    const cleared = await patch(`/api/v1/integration/${base.id}`, { integration: { description: null } });
    expect(cleared.body).toMatchObject({ versionNumber: 3, description: null, name: 'Renamed' });
    // A credential can be added on an earlier integration version id too: it names the same integration.
    const cred = await svc.request('POST', `/api/v1/integration/v/${base.versionId}/credential`, {
      body: { credential: credential({ authType: 'jwt' }) },
      key: author.key,
    });
    expect(cred.status, cred.text).toBe(201);
    expect(cred.body.integrationId).toBe(base.id);
  });

  it('cuts a new action version, scanning the code again; the old version keeps its code', async () => {
    const actionId = base.createdActions[0]?.actionId ?? '';
    const oldVersionId = base.createdActions[0]?.actionVersionId ?? '';
    const refused = await patch(`/api/v1/integration/action/${actionId}`, { action: { code: 'import subprocess\n' } });
    expectError(refused, 400, 'security scan');
    const wide = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`p${i}`, field(`p${i}`)]));
    for (const inputs of [
      { text: { ...field('text', ['object']), allowedTypes: [{ type: 'object', typeDefinition: wide }] } },
      { text: { ...field('text', ['object']), typeDefinition: wide } },
    ]) {
      const tooWide = await patch(`/api/v1/integration/action/${actionId}`, { action: { inputs } });
      expectError(tooWide, 400, 'typeDefinition');
    }
    const res = await patch(`/api/v1/integration/action/${actionId}`, {
      action: {
        code: "result['echo'] = input_data['text'].upper()\n",
        outputs: { echo: field('echo'), length: field('length', ['int']) },
      },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      id: actionId,
      versionNumber: 2,
      name: 'Echo',
      endpoint: 'https://api.example.com/echo',
    });
    expect(Object.keys(res.body.outputs as object)).toEqual(['echo', 'length']);
    conforms(actionResponse, res.body);
    expect(await get(`/api/v1/integration/action/v/${oldVersionId}`)).toMatchObject({
      versionNumber: 1,
      code: actionCode,
    });
    expect(await get(`/api/v1/integration/action/v/${String(res.body.versionId)}`)).toMatchObject({ versionNumber: 2 });
    const detail = (await get(`/api/v1/integration/${base.id}`)) as unknown as Detail;
    expect(detail.actions.map((a) => a.versionId)).toEqual([res.body.versionId]);
    const removed = await patch(`/api/v1/integration/action/${actionId}`, { action: { code: null } });
    expect(removed.body).toMatchObject({ versionNumber: 3, code: null });
  });

  it('cuts a new credential version; authType cannot change', async () => {
    const credentialId = base.createdCredential?.credentialId ?? '';
    const oldVersionId = base.createdCredential?.credentialVersionId ?? '';
    expectError(
      await patch(`/api/v1/integration/credential/${credentialId}`, { credential: { authType: 'jwt' } }),
      400,
      'authType cannot change',
    );
    const res = await patch(`/api/v1/integration/credential/${credentialId}`, {
      credential: {
        name: 'Key v2',
        icon: pngIcon,
        inputs: { token: { displayName: 'Token', variableName: 'token', type: 'str' } },
      },
    });
    expect(res.status, res.text).toBe(200);
    conforms(credentialResponse, res.body);
    expect(res.body).toMatchObject({
      id: credentialId,
      versionNumber: 2,
      name: 'Key v2',
      authType: 'api_key',
      inputs: { token: { isSecret: true, order: 1 } },
    });
    expect(await get(`/api/v1/integration/credential/v/${oldVersionId}`)).toMatchObject({
      versionNumber: 1,
      name: 'API key',
      inputs: { api_key: { type: 'str' } },
    });
  });

  it('answers 400 for an empty update or malformed ids, 404 for unknown ids', async () => {
    expectError(await patch(`/api/v1/integration/${base.id}`, { integration: {} }), 400, 'nothing to update');
    expectError(
      await patch('/api/v1/integration/not-a-uuid', { integration: { name: 'x' } }),
      400,
      'path.integrationId',
    );
    expectError(await patch(`/api/v1/integration/${crypto.randomUUID()}`, { integration: { name: 'x' } }), 404);
    expectError(await patch(`/api/v1/integration/action/${crypto.randomUUID()}`, { action: { name: 'x' } }), 404);
    expectError(
      await patch(`/api/v1/integration/credential/${crypto.randomUUID()}`, { credential: { name: 'x' } }),
      404,
    );
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
      Array.from({ length: 4 }, (_, i) => patch(`/api/v1/integration/${fresh.id}`, { integration: { name: `n${i}` } })),
    );
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(results.map((r) => r.body.versionNumber).sort()).toEqual([2, 3, 4, 5]);
  });

  it('pages the list newest first', async () => {
    const pager = await newAuthor(svc);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await created(svc, pager, { name: `p${i}` })).id);
    const page = async (query: string) => {
      const res = await svc.request('GET', `/api/v1/integration${query}`, { key: pager.key });
      expect(res.status, res.text).toBe(200);
      return res.body as { integrations: Array<{ id: string }>; limit: number; offset: number };
    };
    const first = await page('?limit=2');
    expect(first).toMatchObject({ limit: 2, offset: 0 });
    expect(first.integrations.map((i) => i.id)).toEqual([ids[2], ids[1]]);
    expect((await page('?limit=2&offset=2')).integrations.map((i) => i.id)).toEqual([ids[0]]);
    expect((await page('')).limit).toBe(50);
    expectError(await svc.request('GET', '/api/v1/integration?limit=201', { key: pager.key }), 400, 'query.limit');
    expectError(await svc.request('GET', '/api/v1/integration?offset=-1', { key: pager.key }), 400, 'query.offset');
  });

  it('lists actions in the order they were authored, later additions last, whatever their names', async () => {
    const names = ['Zeta', 'Alpha', 'Mid'];
    const fresh = await created(svc, author, { actions: names.map((name) => action({ name, code: undefined })) });
    expect(fresh.createdActions.map((a) => a.name)).toEqual(names);
    const added = await svc.request('POST', `/api/v1/integration/v/${fresh.versionId}/action`, {
      body: { action: action({ name: 'Aardvark', code: undefined }) },
      key: author.key,
    });
    expect(added.status, added.text).toBe(201);
    const renamed = await patch(`/api/v1/integration/action/${fresh.createdActions[0]?.actionId}`, {
      action: { name: 'Zulu' },
    });
    expect(renamed.status, renamed.text).toBe(200);
    const detail = (await get(`/api/v1/integration/${fresh.id}`)) as unknown as Detail;
    expect(detail.actions.map((a) => a.name)).toEqual(['Zulu', 'Alpha', 'Mid', 'Aardvark']);
    const byVersion = (await get(`/api/v1/integration/v/${fresh.versionId}`)) as unknown as Detail;
    expect(byVersion.actions.map((a) => a.id)).toEqual(detail.actions.map((a) => a.id));
  });

  it('adds actions to an existing integration, scanned, up to 50', async () => {
    const fresh = await created(svc, author, {
      actions: Array.from({ length: 48 }, (_, i) => action({ name: `a${i}`, code: undefined })),
    });
    const add = (body: unknown, key = author.key, versionId = fresh.versionId) =>
      svc.request('POST', `/api/v1/integration/v/${versionId}/action`, { body, key });
    const added = await add({ action: action({ name: 'Added' }) });
    expect(added.status, added.text).toBe(201);
    conforms(actionResponse, added.body);
    expect(added.body).toMatchObject({ integrationId: fresh.id, name: 'Added', versionNumber: 1, code: actionCode });
    expectError(await add({ action: action({ code: 'import subprocess\n' }) }), 400, 'security scan');
    expectError(await add({ action: { name: 'no endpoint' } }), 400, 'body.action.endpoint');
    const attacker = await newAuthor(svc);
    expectError(await add({ action: action() }, attacker.key), 403, 'another organization');
    expectError(await add({ action: action() }, author.key, fresh.id), 404);
    expectError(await add({ action: action() }, author.key, 'nope'), 404);
    // 49 now: two concurrent additions race for the last place.
    const racing = await Promise.all([
      add({ action: action({ name: 'r1' }) }),
      add({ action: action({ name: 'r2' }) }),
    ]);
    expect(racing.map((r) => r.status).sort()).toEqual([201, 400]);
    expect(racing.find((r) => r.status === 400)?.text).toContain('at most 50 actions');
    const detail = (await get(`/api/v1/integration/${fresh.id}`)) as unknown as Detail;
    expect(detail.actions).toHaveLength(50);
  });
});
