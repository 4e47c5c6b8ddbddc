import { randomUUID } from 'node:crypto';
import type { TestService } from '../support/harness.js';

export interface Violation {
  path: string;
  message: string;
}

export function violations(body: Record<string, unknown>): Violation[] {
  return (body.metadata as { violations?: Violation[] } | undefined)?.violations ?? [];
}

export async function countWorkflows(svc: TestService): Promise<number> {
  const row = await svc.service.context.store.db
    .selectFrom('workflows')
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function countVersions(svc: TestService): Promise<number> {
  const row = await svc.service.context.store.db
    .selectFrom('workflow_versions')
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** A key of this organization for a new member, with the given grants and scope. */
export async function createKey(svc: TestService, grants: string[], workspaceIds?: string[]): Promise<string> {
  const user = await svc.admin('POST', '/admin/users', {
    email: `${randomUUID()}@example.com`,
    name: 'member',
    organizationId: svc.organizationId,
  });
  const key = await svc.admin('POST', '/admin/keys', {
    organizationId: svc.organizationId,
    userId: user.body.id,
    name: 'scoped',
    grants,
    ...(workspaceIds ? { workspaceIds } : {}),
  });
  if (key.status !== 201) throw new Error(`key creation failed: ${key.text}`);
  return String(key.body.key);
}

/** Another organization with a workspace and a full key. */
export async function otherOrganization(
  svc: TestService,
  grants: string[] = ['workflow:full'],
): Promise<{ workspaceId: string; key: string }> {
  const org = await svc.admin('POST', '/admin/organizations', { name: `other-${randomUUID()}` });
  const organizationId = String(org.body.id);
  const workspace = await svc.admin('POST', `/admin/organizations/${organizationId}/workspaces`, { name: 'theirs' });
  const user = await svc.admin('POST', '/admin/users', {
    email: `${randomUUID()}@example.com`,
    name: 'them',
    organizationId,
  });
  const key = await svc.admin('POST', '/admin/keys', {
    organizationId,
    userId: user.body.id,
    name: 'theirs',
    grants,
  });
  return { workspaceId: String(workspace.body.id), key: String(key.body.key) };
}
