import { randomUUID } from 'node:crypto';
import type { Db } from './database.js';
import type { Grant } from '../domain/grants.js';
import type { KeyScope } from '../domain/auth-context.js';
import type { ApiKeyTable } from './tables/tenancy.js';

export interface Organization {
  id: string;
  name: string;
  verified: boolean;
  createdAt: string;
}

export interface Workspace {
  id: string;
  organizationId: string;
  name: string;
  createdAt: string;
}

export interface User {
  id: string;
  email: string;
  name: string;
  createdAt: string;
}

export interface Membership {
  organizationId: string;
  userId: string;
  role: string;
  createdAt: string;
}

export interface ApiKeyRecord {
  id: string;
  organizationId: string;
  userId: string;
  name: string;
  secretHash: string;
  scope: KeyScope;
  grants: Grant[];
  expiresAt: string | null;
  revokedAt: string | null;
  lastUsedAt: string | null;
  createdAt: string;
}

/** A key as authentication reads it: with its organization's verification and whether its user is still a member. */
export interface KeyForAuthentication extends ApiKeyRecord {
  organizationVerified: boolean;
  ownerIsMember: boolean;
}

const now = () => new Date().toISOString();

/** Reads and writes organizations, workspaces, users, memberships and keys. */
export class TenancyRepo {
  constructor(private readonly db: Db) {}

  async createOrganization(name: string, verified: boolean): Promise<Organization> {
    const row = { id: randomUUID(), name, verified: verified ? 1 : 0, created_at: now() };
    await this.db.insertInto('organizations').values(row).execute();
    return { id: row.id, name, verified, createdAt: row.created_at };
  }

  async listOrganizations(): Promise<Organization[]> {
    const rows = await this.db.selectFrom('organizations').selectAll().orderBy('created_at').execute();
    return rows.map((r) => ({ id: r.id, name: r.name, verified: r.verified === 1, createdAt: r.created_at }));
  }

  async findOrganization(id: string): Promise<Organization | undefined> {
    const r = await this.db.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst();
    return r && { id: r.id, name: r.name, verified: r.verified === 1, createdAt: r.created_at };
  }

  async setOrganizationVerified(id: string, verified: boolean): Promise<boolean> {
    const result = await this.db
      .updateTable('organizations')
      .set({ verified: verified ? 1 : 0 })
      .where('id', '=', id)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async countOrganizations(): Promise<number> {
    const r = await this.db
      .selectFrom('organizations')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  async createWorkspace(organizationId: string, name: string): Promise<Workspace> {
    const row = { id: randomUUID(), organization_id: organizationId, name, created_at: now() };
    await this.db.insertInto('workspaces').values(row).execute();
    return { id: row.id, organizationId, name, createdAt: row.created_at };
  }

  async findWorkspace(id: string): Promise<Workspace | undefined> {
    const r = await this.db.selectFrom('workspaces').selectAll().where('id', '=', id).executeTakeFirst();
    return r && { id: r.id, organizationId: r.organization_id, name: r.name, createdAt: r.created_at };
  }

  async listWorkspaces(organizationId: string): Promise<Workspace[]> {
    const rows = await this.db
      .selectFrom('workspaces')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .orderBy('created_at')
      .execute();
    return rows.map((r) => ({ id: r.id, organizationId: r.organization_id, name: r.name, createdAt: r.created_at }));
  }

  async createUser(email: string, name: string): Promise<User> {
    const row = { id: randomUUID(), email, name, created_at: now() };
    await this.db.insertInto('users').values(row).execute();
    return { id: row.id, email, name, createdAt: row.created_at };
  }

  async findUser(idOrEmail: string): Promise<User | undefined> {
    const r = await this.db
      .selectFrom('users')
      .selectAll()
      .where((eb) => eb.or([eb('id', '=', idOrEmail), eb('email', '=', idOrEmail)]))
      .executeTakeFirst();
    return r && { id: r.id, email: r.email, name: r.name, createdAt: r.created_at };
  }

  async listUsers(organizationId?: string): Promise<User[]> {
    let query = this.db.selectFrom('users').selectAll('users').orderBy('users.created_at');
    if (organizationId) {
      query = query
        .innerJoin('memberships', 'memberships.user_id', 'users.id')
        .where('memberships.organization_id', '=', organizationId);
    }
    const rows = await query.execute();
    return rows.map((r) => ({ id: r.id, email: r.email, name: r.name, createdAt: r.created_at }));
  }

  async addMember(organizationId: string, userId: string, role: string): Promise<Membership> {
    const row = { organization_id: organizationId, user_id: userId, role, created_at: now() };
    await this.db.insertInto('memberships').values(row).execute();
    return { organizationId, userId, role, createdAt: row.created_at };
  }

  async removeMember(organizationId: string, userId: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('memberships')
      .where('organization_id', '=', organizationId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  async isMember(organizationId: string, userId: string): Promise<boolean> {
    const r = await this.db
      .selectFrom('memberships')
      .select('user_id')
      .where('organization_id', '=', organizationId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return r !== undefined;
  }

  async insertKey(key: Omit<ApiKeyRecord, 'revokedAt' | 'lastUsedAt' | 'createdAt'>): Promise<ApiKeyRecord> {
    const createdAt = now();
    await this.db
      .insertInto('api_keys')
      .values({
        id: key.id,
        organization_id: key.organizationId,
        user_id: key.userId,
        name: key.name,
        secret_hash: key.secretHash,
        scope_type: key.scope.type,
        workspace_ids: JSON.stringify(key.scope.type === 'workspaces' ? key.scope.workspaceIds : []),
        grants: JSON.stringify(key.grants),
        expires_at: key.expiresAt,
        revoked_at: null,
        last_used_at: null,
        created_at: createdAt,
      })
      .execute();
    return { ...key, revokedAt: null, lastUsedAt: null, createdAt };
  }

  async findKey(id: string): Promise<ApiKeyRecord | undefined> {
    const r = await this.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
    return r && toKey(r);
  }

  /** The key, its organization and the owner's membership in one query (the hot path of every request). */
  async findKeyForAuthentication(id: string): Promise<KeyForAuthentication | undefined> {
    const r = await this.db
      .selectFrom('api_keys')
      .innerJoin('organizations', 'organizations.id', 'api_keys.organization_id')
      .leftJoin('memberships', (join) =>
        join
          .onRef('memberships.organization_id', '=', 'api_keys.organization_id')
          .onRef('memberships.user_id', '=', 'api_keys.user_id'),
      )
      .selectAll('api_keys')
      .select(['organizations.verified', 'memberships.user_id as member_id'])
      .where('api_keys.id', '=', id)
      .executeTakeFirst();
    return r && { ...toKey(r), organizationVerified: r.verified === 1, ownerIsMember: r.member_id !== null };
  }

  async listKeys(organizationId: string): Promise<ApiKeyRecord[]> {
    const rows = await this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .orderBy('created_at')
      .execute();
    return rows.map(toKey);
  }

  async revokeKey(id: string): Promise<boolean> {
    const result = await this.db
      .updateTable('api_keys')
      .set({ revoked_at: now() })
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async touchKey(id: string, at: string): Promise<void> {
    await this.db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
  }
}

function toKey(r: ApiKeyTable): ApiKeyRecord {
  const scope: KeyScope =
    r.scope_type === 'organization'
      ? { type: 'organization' }
      : { type: 'workspaces', workspaceIds: JSON.parse(r.workspace_ids) as string[] };
  return {
    id: r.id,
    organizationId: r.organization_id,
    userId: r.user_id,
    name: r.name,
    secretHash: r.secret_hash,
    scope,
    grants: JSON.parse(r.grants) as Grant[],
    expiresAt: r.expires_at,
    revokedAt: r.revoked_at,
    lastUsedAt: r.last_used_at,
    createdAt: r.created_at,
  };
}
