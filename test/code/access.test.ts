import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answered, startTestService, type TestService } from '../support/harness.js';
import { codeBody, expectError, expectRefused } from './support.js';
import { clientFor, newCaller } from '../support/keys.js';

describe('code node endpoints: who may author', () => {
  let svc: TestService;
  let codeId: string;
  beforeAll(async () => {
    svc = await startTestService();
    ({ id: codeId } = await answered(svc.client.POST('/api/v1/code', { body: codeBody() }), 201));
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('answers 401 without a key or with a wrong one', async () => {
    expectError(await svc.request('POST', '/api/v1/code', { body: codeBody(), key: null }), 401);
    expectError(await svc.request('PATCH', `/api/v1/code/${codeId}`, { body: { name: 'x' }, key: 'nope' }), 401);
  });

  it('refuses an unverified organization with 403 before looking at the body', async () => {
    const caller = await newCaller(svc, ['code:full'], { verified: false });
    const bad = { name: '', sourceCode: 42, inputs: 'not a map' };
    expectError(await svc.request('POST', '/api/v1/code', { body: bad, key: caller.key }), 403, 'not verified');
    await expectRefused(clientFor(svc, caller.key).POST('/api/v1/code', { body: codeBody() }), 403, 'not verified');
    expectError(
      await svc.request('PATCH', `/api/v1/code/${codeId}`, { body: bad, key: caller.key }),
      403,
      'not verified',
    );
    // Even a malformed path id is not looked at before the permission check.
    expectError(
      await svc.request('PATCH', '/api/v1/code/not-a-uuid', { body: bad, key: caller.key }),
      403,
      'not verified',
    );
  });

  it('refuses a workspace-scoped key with 403, even holding Code: Full', async () => {
    const caller = await newCaller(svc, ['code:full'], { workspaceScoped: true });
    await expectRefused(
      clientFor(svc, caller.key).POST('/api/v1/code', { body: codeBody() }),
      403,
      'not organization-scoped',
    );
    // An empty body is what the document forbids: the permission check answers first.
    expectError(
      await svc.request('PATCH', `/api/v1/code/${codeId}`, { body: {}, key: caller.key }),
      403,
      'not organization-scoped',
    );
  });

  it('refuses a key without Code: Full with 403, before the body', async () => {
    const caller = await newCaller(svc, ['workflow:full', 'integration:full', 'case:full']);
    expectError(await svc.request('POST', '/api/v1/code', { body: {}, key: caller.key }), 403, 'Code: Full');
    await expectRefused(
      clientFor(svc, caller.key).PATCH('/api/v1/code/{codeId}', { params: { path: { codeId } }, body: { name: 'x' } }),
      403,
      'Code: Full',
    );
  });

  it('lets a fresh verified organization with only Code: Full author', async () => {
    const caller = await newCaller(svc, ['code:full']);
    await answered(clientFor(svc, caller.key).POST('/api/v1/code', { body: codeBody() }), 201);
  });

  it('accepts no workspace id, in the body or as a header', async () => {
    const inBody = await svc.request('POST', '/api/v1/code', { body: codeBody({ workspaceId: svc.workspaceId }) });
    expectError(inBody, 400, 'no workspace id is accepted');
    const inHeader = await svc.request('POST', '/api/v1/code', {
      body: codeBody(),
      headers: { 'x-workspace-id': svc.workspaceId },
    });
    expectError(inHeader, 400, 'no workspace id is accepted');
    const onPatch = await svc.request('PATCH', `/api/v1/code/${codeId}`, {
      body: { name: 'y', workspaceId: svc.workspaceId },
    });
    expectError(onPatch, 400, 'no workspace id is accepted');
  });

  it('ignores providerId and never takes the organization from the body', async () => {
    const other = await newCaller(svc, ['code:full']);
    // Fields the document does not name are ignored, so the typed client may carry them.
    const body = { ...codeBody(), providerId: randomUUID(), organizationId: other.organizationId };
    const created = await answered(svc.client.POST('/api/v1/code', { body }), 201);
    expect(created).not.toHaveProperty('providerId');
    expect(created).not.toHaveProperty('organizationId');
    // The node landed in the key's organization: the other organization cannot update it.
    await expectRefused(
      clientFor(svc, other.key).PATCH('/api/v1/code/{codeId}', {
        params: { path: { codeId: created.id } },
        body: { name: 'mine now' },
      }),
      404,
    );
  });

  it('has no GET and no DELETE: 405 with the methods it has', async () => {
    for (const [method, path, allow] of [
      ['GET', `/api/v1/code/${codeId}`, 'PATCH'],
      ['DELETE', `/api/v1/code/${codeId}`, 'PATCH'],
      ['GET', '/api/v1/code', 'POST'],
    ] as const) {
      const res = await svc.request(method, path);
      expect(res.status, `${method} ${path}`).toBe(405);
      expect(res.headers.get('allow')).toBe(allow);
      expect(res.body).toMatchObject({ statusCode: 405, errorCode: 'METHOD_NOT_ALLOWED', path });
    }
  });

  it('documents both operations in the OpenAPI document', async () => {
    const doc = await svc.request('GET', '/openapi.json', { key: null });
    const paths = doc.body.paths as Record<
      string,
      Record<string, { requestBody?: unknown; responses: Record<string, unknown> }>
    >;
    expect(paths['/api/v1/code']?.post?.requestBody).toBeDefined();
    expect(paths['/api/v1/code']?.post?.responses).toHaveProperty('201');
    expect(paths['/api/v1/code/{codeId}']?.patch?.requestBody).toBeDefined();
    expect(paths['/api/v1/code/{codeId}']?.patch?.responses).toHaveProperty('404');
    // The recursive Field object is a component both sides point at, and every ref resolves from the document root.
    expect(JSON.stringify(paths['/api/v1/code']?.post?.requestBody)).toContain(
      '"$ref":"#/components/schemas/CatalogFieldInput"',
    );
    const text = doc.text;
    expect(text).not.toContain('#/$defs/');
    const schemas = (doc.body.components as { schemas: Record<string, unknown> }).schemas;
    for (const ref of text.matchAll(/"#\/components\/schemas\/([A-Za-z0-9_]+)"/g))
      expect(schemas, ref[1]).toHaveProperty(String(ref[1]));
  });
});
