import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireOrganizationGrant, requireWorkspaceGrant } from '../../src/auth/access.js';
import type { AuthContext } from '../../src/domain/auth-context.js';
import { httpStatus } from '../../src/api/errors.js';
import { DomainError } from '../../src/errors.js';
import { TenancyRepo } from '../../src/store/tenancy-repo.js';
import { answered, refused, startTestService, type TestService } from '../support/harness.js';
import { clientFor, secretOf } from '../support/keys.js';

interface KeyResponse {
  key: string;
  apiKey: { id: string };
}

describe('authentication and permissions', () => {
  let svc: TestService;
  let otherOrgId: string;
  let otherWorkspaceId: string;
  let secondWorkspaceId: string;

  async function makeKey(body: Record<string, unknown>): Promise<KeyResponse> {
    const res = await svc.admin('POST', '/admin/keys', {
      organizationId: svc.organizationId,
      userId: svc.userId,
      name: 'k',
      ...body,
    });
    expect(res.status).toBe(201);
    return res.body as unknown as KeyResponse;
  }

  beforeAll(async () => {
    svc = await startTestService();
    otherOrgId = ((await svc.admin('POST', '/admin/organizations', { name: 'Other' })).body as { id: string }).id;
    otherWorkspaceId = (
      (await svc.admin('POST', `/admin/organizations/${otherOrgId}/workspaces`, { name: 'Theirs' })).body as {
        id: string;
      }
    ).id;
    secondWorkspaceId = (
      (await svc.admin('POST', `/admin/organizations/${svc.organizationId}/workspaces`, { name: 'Second' })).body as {
        id: string;
      }
    ).id;
  });
  afterAll(async () => {
    await svc.stop();
  });

  /** Who the service takes `key` for. */
  const me = (key: string) => clientFor(svc, key).GET('/api/v1/me');

  it('accepts the key as x-service-key and as a bearer token', async () => {
    const viaHeader = await answered(svc.client.GET('/api/v1/me'), 200);
    expect(viaHeader).toMatchObject({
      organizationId: svc.organizationId,
      organizationVerified: true,
      scope: { type: 'organization' },
    });
    const viaBearer = await svc.request('GET', '/api/v1/me', {
      key: null,
      headers: { authorization: `Bearer ${svc.key}` },
    });
    expect(viaBearer.status).toBe(200);
  });

  it.each([
    ['missing', null],
    ['malformed', 'not-a-key'],
    ['unknown', 'cf_00000000000000000000000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
  ])('answers 401 for a %s key', async (_label, key) => {
    // Raw: a missing or malformed key header is what the test sends.
    const res = await svc.request('GET', '/api/v1/me', { key });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ statusCode: 401, errorCode: 'UNAUTHORIZED', path: '/api/v1/me' });
  });

  it('answers 401 for a right id with a wrong secret', async () => {
    const tampered = svc.key.slice(0, -4) + (svc.key.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    await refused(me(tampered), 401);
  });

  it('answers 401 once a key has expired', async () => {
    const { key } = await makeKey({ grants: ['workflow:read'], expiresAt: new Date(Date.now() + 3000).toISOString() });
    await answered(me(key), 200);
    await new Promise((r) => setTimeout(r, 3100));
    expect((await refused(me(key), 401)).message).toMatch(/expired/);
  });

  it('answers 401 after revocation', async () => {
    const { key, apiKey } = await makeKey({ grants: ['workflow:read'] });
    await answered(me(key), 200);
    expect((await svc.admin('POST', `/admin/keys/${apiKey.id}/revoke`)).status).toBe(204);
    await refused(me(key), 401);
    expect((await svc.admin('POST', `/admin/keys/${apiKey.id}/revoke`)).status).toBe(409);
  });

  it('refuses a key revoked by another process once its cached lookup (keyCacheMs, at most 1 s) expires', async () => {
    const { key, apiKey } = await makeKey({ grants: ['workflow:read'] });
    await answered(me(key), 200);
    // Straight to the store, as another API process would: this process is not told.
    expect(await new TenancyRepo(svc.service.context.store.db).revokeKey(apiKey.id)).toBe(true);
    // Fails only if the cached lookup never expires: the bound is 1 s, the wait up to 10 s.
    let status = 200;
    for (let i = 0; i < 100 && status === 200; i++) {
      await new Promise((r) => setTimeout(r, 100));
      status = (await me(key)).response.status;
    }
    expect(status).toBe(401);
  });

  it("answers 401 when the key's user left the organization", async () => {
    const user = (
      await svc.admin('POST', '/admin/users', {
        email: 'leaver@example.com',
        name: 'Leaver',
        organizationId: svc.organizationId,
      })
    ).body as {
      id: string;
    };
    const { key } = await makeKey({ userId: user.id, grants: ['workflow:read'] });
    await answered(me(key), 200);
    expect((await svc.admin('DELETE', `/admin/organizations/${svc.organizationId}/members/${user.id}`)).status).toBe(
      204,
    );
    expect((await refused(me(key), 401)).message).toMatch(/no longer a member/);
  });

  it('refuses keys for non-members, foreign workspaces and past expiry', async () => {
    const outsider = (await svc.admin('POST', '/admin/users', { email: 'outsider@example.com', name: 'Outsider' }))
      .body as { id: string };
    const refusedKey = (extra: Record<string, unknown>) =>
      svc.admin('POST', '/admin/keys', {
        organizationId: svc.organizationId,
        userId: svc.userId,
        name: 'x',
        grants: ['case:read'],
        ...extra,
      });
    const notMember = await refusedKey({ userId: outsider.id });
    expect(notMember.status).toBe(400);
    const foreign = await refusedKey({ workspaceIds: [otherWorkspaceId] });
    expect(foreign.status).toBe(400);
    const past = await refusedKey({ expiresAt: '2001-01-01T00:00:00Z' });
    expect(past.status).toBe(400);
  });

  it('keeps the operator area behind the admin token', async () => {
    // Raw: no token, then a wrong one.
    expect((await svc.request('GET', '/admin/organizations', { key: null })).status).toBe(401);
    expect(
      (
        await svc.request('GET', '/admin/organizations', {
          key: null,
          headers: { authorization: 'Bearer wrong-token-wrong-token' },
        })
      ).status,
    ).toBe(401);
    const list = await svc.admin('GET', `/admin/organizations/${svc.organizationId}/keys`);
    expect(list.status).toBe(200);
    expect(list.text).not.toContain('secret');
    expect(list.text).not.toContain(secretOf(svc.key));
  });

  describe('grants and scope', () => {
    async function contextFor(key: string): Promise<AuthContext> {
      const context = await answered(me(key), 200);
      return { ...context, grants: new Set(context.grants) };
    }
    const tenancy = () => new TenancyRepo(svc.service.context.store.db);
    const status = async (fn: () => unknown) => {
      try {
        await fn();
        return 200;
      } catch (err) {
        if (err instanceof DomainError) return httpStatus(err);
        throw err;
      }
    };

    it('gives 403 for a missing grant, another organization, an unlisted workspace; 404 for an unknown one', async () => {
      const reader = await contextFor((await makeKey({ grants: ['workflow:read'] })).key);
      expect(await status(() => requireWorkspaceGrant(tenancy(), reader, svc.workspaceId, 'workflow:read'))).toBe(200);
      expect(await status(() => requireWorkspaceGrant(tenancy(), reader, svc.workspaceId, 'workflow:full'))).toBe(403);
      expect(await status(() => requireWorkspaceGrant(tenancy(), reader, otherWorkspaceId, 'workflow:read'))).toBe(403);
      expect(
        await status(() =>
          requireWorkspaceGrant(tenancy(), reader, '00000000-0000-4000-8000-000000000000', 'workflow:read'),
        ),
      ).toBe(404);

      const scoped = await contextFor(
        (await makeKey({ grants: ['workflow:full'], workspaceIds: [svc.workspaceId] })).key,
      );
      expect(await status(() => requireWorkspaceGrant(tenancy(), scoped, svc.workspaceId, 'workflow:read'))).toBe(200);
      expect(await status(() => requireWorkspaceGrant(tenancy(), scoped, secondWorkspaceId, 'workflow:read'))).toBe(
        403,
      );
      expect(await status(() => requireOrganizationGrant(scoped, 'workflow:full'))).toBe(403);
    });

    it('requires a verified organization where asked', async () => {
      const full = await contextFor(svc.key);
      expect(await status(() => requireOrganizationGrant(full, 'code:full', { verified: true }))).toBe(200);
      expect(
        await status(() =>
          requireOrganizationGrant({ ...full, organizationVerified: false }, 'code:full', { verified: true }),
        ),
      ).toBe(403);
      const noCode = await contextFor((await makeKey({ grants: ['integration:full'] })).key);
      expect(await status(() => requireOrganizationGrant(noCode, 'code:full'))).toBe(403);
      expect(await status(() => requireOrganizationGrant(noCode, 'integration:read'))).toBe(200);
    });
  });
});
