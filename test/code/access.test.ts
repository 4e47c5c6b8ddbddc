import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.js';
import { codeBody, expectError } from './support.js';
import { newCaller } from '../support/keys.js';

describe('code node endpoints: who may author', () => {
  let svc: TestService;
  let codeId: string;
  beforeAll(async () => {
    svc = await startTestService();
    const created = await svc.request('POST', '/api/v1/code', { body: codeBody() });
    expect(created.status, created.text).toBe(201);
    codeId = String(created.body.id);
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
    expectError(await svc.request('POST', '/api/v1/code', { body: codeBody(), key: caller.key }), 403, 'not verified');
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
    expectError(
      await svc.request('POST', '/api/v1/code', { body: codeBody(), key: caller.key }),
      403,
      'not organization-scoped',
    );
    expectError(
      await svc.request('PATCH', `/api/v1/code/${codeId}`, { body: {}, key: caller.key }),
      403,
      'not organization-scoped',
    );
  });

  it('refuses a key without Code: Full with 403, before the body', async () => {
    const caller = await newCaller(svc, ['workflow:full', 'integration:full', 'case:full']);
    expectError(await svc.request('POST', '/api/v1/code', { body: {}, key: caller.key }), 403, 'Code: Full');
    expectError(
      await svc.request('PATCH', `/api/v1/code/${codeId}`, { body: { name: 'x' }, key: caller.key }),
      403,
      'Code: Full',
    );
  });

  it('lets a fresh verified organization with only Code: Full author', async () => {
    const caller = await newCaller(svc, ['code:full']);
    const res = await svc.request('POST', '/api/v1/code', { body: codeBody(), key: caller.key });
    expect(res.status, res.text).toBe(201);
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
    const res = await svc.request('POST', '/api/v1/code', {
      body: codeBody({ providerId: randomUUID(), organizationId: other.organizationId }),
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body).not.toHaveProperty('providerId');
    expect(res.body).not.toHaveProperty('organizationId');
    // The node landed in the key's organization: the other organization cannot update it.
    const patch = await svc.request('PATCH', `/api/v1/code/${String(res.body.id)}`, {
      body: { name: 'mine now' },
      key: other.key,
    });
    expectError(patch, 404);
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
