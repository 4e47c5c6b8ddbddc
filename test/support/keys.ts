import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { parseKey } from '../../src/auth/api-keys.js';
import type { Grant } from '../../src/domain/grants.js';
import { createClient, type CaseflowClient } from '../../src/client/index.js';
import type { TestService } from './harness.js';

/** The secret part of an API key (base64url, so it may itself contain underscores). */
export const secretOf = (key: string): string => parseKey(key)?.secret ?? key;

/** The typed client calling the service with another key than its default one. */
export const clientFor = (svc: TestService, key: string): CaseflowClient => createClient({ baseUrl: svc.url, key });

/** Whom a test calls the API as: an organization, a workspace of it, a member and the member's key. */
export interface Caller {
  organizationId: string;
  workspaceId: string;
  userId: string;
  key: string;
}

/** A new workspace of the organization (the service's own by default), made through the operator area. */
export async function newWorkspace(svc: TestService, organizationId = svc.organizationId): Promise<string> {
  const ws = await svc.admin('POST', `/admin/organizations/${organizationId}/workspaces`, {
    name: `ws ${randomUUID()}`,
  });
  expect(ws.status, ws.text).toBe(201);
  return String(ws.body.id);
}

/**
 * A key with these grants for a new member of the organization (the
 * service's own by default) or for `userId`, scoped to `workspaceIds` when given.
 */
export async function newKey(
  svc: TestService,
  grants: Grant[],
  options: { organizationId?: string; workspaceIds?: string[]; userId?: string } = {},
): Promise<{ key: string; userId: string }> {
  const organizationId = options.organizationId ?? svc.organizationId;
  let userId = options.userId;
  if (!userId) {
    const user = await svc.admin('POST', '/admin/users', {
      email: `${randomUUID()}@example.com`,
      name: 'member',
      organizationId,
    });
    expect(user.status, user.text).toBe(201);
    userId = String(user.body.id);
  }
  const key = await svc.admin('POST', '/admin/keys', {
    organizationId,
    userId,
    name: 'test key',
    grants,
    ...(options.workspaceIds ? { workspaceIds: options.workspaceIds } : {}),
  });
  expect(key.status, key.text).toBe(201);
  return { key: String(key.body.key), userId };
}

/**
 * A new organization (verified unless told otherwise) with a workspace and a
 * member whose key has these grants, scoped to that workspace when asked.
 */
export async function newCaller(
  svc: TestService,
  grants: Grant[],
  options: { verified?: boolean; workspaceScoped?: boolean } = {},
): Promise<Caller> {
  const org = await svc.admin('POST', '/admin/organizations', {
    name: `org ${randomUUID()}`,
    verified: options.verified ?? true,
  });
  expect(org.status, org.text).toBe(201);
  const organizationId = String(org.body.id);
  const workspaceId = await newWorkspace(svc, organizationId);
  const { key, userId } = await newKey(svc, grants, {
    organizationId,
    ...(options.workspaceScoped ? { workspaceIds: [workspaceId] } : {}),
  });
  return { organizationId, workspaceId, userId, key };
}
