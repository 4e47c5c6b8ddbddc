import type { z } from 'zod';
import { loadConfig } from '../../config/config.js';
import { parseGrantList } from '../../domain/grants.js';
import { migrateToLatest, openStore } from '../../store/database.js';
import { TenancyRepo } from '../../store/tenancy-repo.js';
import {
  addMemberInput,
  createKeyInput,
  createOrganizationInput,
  createUserInput,
  createWorkspaceInput,
} from '../../tenancy/schemas.js';
import { TenancyError, TenancyService } from '../../tenancy/tenancy-service.js';
import { fail, print, sayWhileWaiting } from './output.js';

/**
 * What the tenancy operator commands do. Loaded only when one of them runs (`tenancy-commands.ts` imports it
 * lazily): the store and its drivers cost start-up time the client commands never need.
 */

function parse<T extends z.ZodType>(schema: T, value: unknown): z.output<T> {
  const result = schema.safeParse(value);
  if (!result.success) fail(result.error.issues.map((i) => `${i.path.join('.') || 'input'}: ${i.message}`).join('; '));
  return result.data;
}

/** Operator commands work on the store directly (same data directory / DATABASE_URL as the service). */
async function withTenancy(fn: (service: TenancyService) => Promise<unknown>): Promise<void> {
  const config = loadConfig();
  const store = openStore(config.dataDir, config.databaseUrl);
  try {
    await migrateToLatest(store.db, sayWhileWaiting);
    const result = await fn(new TenancyService(new TenancyRepo(store.db)));
    if (result !== undefined) print(result);
  } catch (err) {
    if (err instanceof TenancyError) fail(err.message);
    throw err;
  } finally {
    await store.close();
  }
}

export interface KeyOptions {
  org: string;
  user: string;
  name: string;
  grants: string;
  workspaces?: string;
  expiresInDays?: string;
}

export const tenancyJobs = {
  migrate: () => withTenancy(() => Promise.resolve({ migrated: true })),
  createOrganization: (name: string, verified: boolean) =>
    withTenancy((s) => s.createOrganization(parse(createOrganizationInput, { name, verified }))),
  listOrganizations: () => withTenancy((s) => s.listOrganizations()),
  verifyOrganization: (id: string, verified: boolean) => withTenancy(async (s) => s.setVerified(id, verified)),
  createWorkspace: (organizationId: string, name: string) =>
    withTenancy((s) => s.createWorkspace(organizationId, parse(createWorkspaceInput, { name }))),
  listWorkspaces: (organizationId: string) => withTenancy((s) => s.listWorkspaces(organizationId)),
  createUser: (email: string, name: string, organizationId: string | undefined, role: string) =>
    withTenancy((s) => s.createUser(parse(createUserInput, { email, name, organizationId, role }))),
  listUsers: (organizationId: string | undefined) => withTenancy((s) => s.listUsers(organizationId)),
  addMember: (organizationId: string, userId: string, role: string) =>
    withTenancy((s) => s.addMember(organizationId, parse(addMemberInput, { userId, role }))),
  removeMember: (organizationId: string, userId: string) =>
    withTenancy(async (s) => s.removeMember(organizationId, userId)),
  createKey: (opts: KeyOptions) =>
    withTenancy(async (s) => {
      let grantList;
      try {
        grantList = parseGrantList(opts.grants);
      } catch {
        fail(`--grants: unknown grant in "${opts.grants}"`);
      }
      const days = opts.expiresInDays === undefined ? undefined : Number(opts.expiresInDays);
      if (days !== undefined && !(days > 0)) fail('--expires-in-days must be a positive number');
      const input = parse(createKeyInput, {
        organizationId: opts.org,
        userId: opts.user,
        name: opts.name,
        grants: grantList,
        workspaceIds: opts.workspaces?.split(',').map((w) => w.trim()),
        expiresAt: days === undefined ? undefined : new Date(Date.now() + days * 86_400_000).toISOString(),
      });
      const created = await s.createKey(input);
      return { key: created.key, note: 'shown once; store it now', apiKey: created.view };
    }),
  listKeys: (organizationId: string) => withTenancy((s) => s.listKeys(organizationId)),
  revokeKey: (keyId: string) => withTenancy(async (s) => s.revokeKey(keyId)),
};
