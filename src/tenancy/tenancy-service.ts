import type { z } from 'zod';
import { canUseWorkspace } from '../auth/access.js';
import { issueKey } from '../auth/api-keys.js';
import type { AuthContext } from '../domain/auth-context.js';
import { grants as allGrants } from '../domain/grants.js';
import type { ApiKeyRecord, Membership, Organization, TenancyRepo, User, Workspace } from '../store/tenancy-repo.js';
import type {
  addMemberInput,
  createKeyInput,
  createOrganizationInput,
  createUserInput,
  createWorkspaceInput,
  KeyView,
} from './schemas.js';

export class TenancyError extends Error {
  constructor(
    readonly kind: 'not_found' | 'conflict' | 'invalid',
    message: string,
  ) {
    super(message);
    this.name = 'TenancyError';
  }
}

export interface CreatedKey {
  /** The key itself: shown once, never stored. */
  key: string;
  view: KeyView;
}

export interface BootstrapResult {
  organization: Organization;
  workspace: Workspace;
  user: User;
  key: CreatedKey;
}

export function keyView(record: ApiKeyRecord): KeyView {
  return {
    id: record.id,
    organizationId: record.organizationId,
    userId: record.userId,
    name: record.name,
    scope: record.scope,
    grants: record.grants,
    expiresAt: record.expiresAt,
    revokedAt: record.revokedAt,
    lastUsedAt: record.lastUsedAt,
    createdAt: record.createdAt,
  };
}

/** Operator actions on tenancy, shared by the CLI and the admin HTTP area. */
export class TenancyService {
  constructor(
    private readonly repo: TenancyRepo,
    /** Told when a key (or, without an id, any key) may have lost access, so this process's key cache forgets it at once. */
    private readonly accessChanged: (keyId?: string) => void = () => undefined,
  ) {}

  /** The workspaces of the key's organization that the key reaches with at least one of its grants. */
  async reachableWorkspaces(auth: AuthContext): Promise<Workspace[]> {
    return (await this.repo.listWorkspaces(auth.organizationId)).filter((w) =>
      [...auth.grants].some((g) => canUseWorkspace(auth, w, g)),
    );
  }

  createOrganization(input: z.output<typeof createOrganizationInput>): Promise<Organization> {
    return this.repo.createOrganization(input.name, input.verified);
  }

  listOrganizations(): Promise<Organization[]> {
    return this.repo.listOrganizations();
  }

  async setVerified(organizationId: string, verified: boolean): Promise<void> {
    if (!(await this.repo.setOrganizationVerified(organizationId, verified))) {
      throw new TenancyError('not_found', `Organization ${organizationId} does not exist`);
    }
  }

  async createWorkspace(organizationId: string, input: z.output<typeof createWorkspaceInput>): Promise<Workspace> {
    await this.organization(organizationId);
    return this.repo.createWorkspace(organizationId, input.name);
  }

  async listWorkspaces(organizationId: string): Promise<Workspace[]> {
    await this.organization(organizationId);
    return this.repo.listWorkspaces(organizationId);
  }

  async createUser(input: z.output<typeof createUserInput>): Promise<User> {
    if (await this.repo.findUser(input.email))
      throw new TenancyError('conflict', `A user with email ${input.email} exists`);
    if (input.organizationId) await this.organization(input.organizationId);
    const user = await this.repo.createUser(input.email, input.name);
    if (input.organizationId) await this.repo.addMember(input.organizationId, user.id, input.role);
    return user;
  }

  listUsers(organizationId?: string): Promise<User[]> {
    return this.repo.listUsers(organizationId);
  }

  async addMember(organizationId: string, input: z.output<typeof addMemberInput>): Promise<Membership> {
    await this.organization(organizationId);
    if (!(await this.repo.findUser(input.userId)))
      throw new TenancyError('not_found', `User ${input.userId} does not exist`);
    if (await this.repo.isMember(organizationId, input.userId))
      throw new TenancyError('conflict', 'The user is already a member');
    return this.repo.addMember(organizationId, input.userId, input.role);
  }

  /** Removing a member makes every key of theirs in that organization answer 401. */
  async removeMember(organizationId: string, userId: string): Promise<void> {
    if (!(await this.repo.removeMember(organizationId, userId))) {
      throw new TenancyError('not_found', `User ${userId} is not a member of organization ${organizationId}`);
    }
    this.accessChanged();
  }

  async createKey(input: z.output<typeof createKeyInput>): Promise<CreatedKey> {
    await this.organization(input.organizationId);
    if (!(await this.repo.isMember(input.organizationId, input.userId))) {
      throw new TenancyError('invalid', 'The key owner must be a member of the organization');
    }
    if (input.workspaceIds) {
      const own = new Set((await this.repo.listWorkspaces(input.organizationId)).map((w) => w.id));
      const foreign = input.workspaceIds.filter((id) => !own.has(id));
      if (foreign.length > 0)
        throw new TenancyError('invalid', `Workspaces not in the organization: ${foreign.join(', ')}`);
    }
    if (input.expiresAt && new Date(input.expiresAt) <= new Date())
      throw new TenancyError('invalid', 'expiresAt is in the past');
    const issued = issueKey();
    const record = await this.repo.insertKey({
      id: issued.id,
      organizationId: input.organizationId,
      userId: input.userId,
      name: input.name,
      secretHash: issued.secretHash,
      scope: input.workspaceIds ? { type: 'workspaces', workspaceIds: input.workspaceIds } : { type: 'organization' },
      grants: [...new Set(input.grants)],
      expiresAt: input.expiresAt ? new Date(input.expiresAt).toISOString() : null,
    });
    return { key: issued.key, view: keyView(record) };
  }

  async listKeys(organizationId: string): Promise<KeyView[]> {
    await this.organization(organizationId);
    return (await this.repo.listKeys(organizationId)).map(keyView);
  }

  async revokeKey(keyId: string): Promise<void> {
    const key = await this.repo.findKey(keyId);
    if (!key) throw new TenancyError('not_found', `Key ${keyId} does not exist`);
    if (key.revokedAt) throw new TenancyError('conflict', 'The key is already revoked');
    await this.repo.revokeKey(keyId);
    this.accessChanged(keyId);
  }

  /**
   * On an empty store: a default verified organization and workspace, an
   * owner, and a full-access key, so a first start is usable at once.
   * Returns undefined when the store already has an organization.
   */
  async bootstrap(): Promise<BootstrapResult | undefined> {
    if ((await this.repo.countOrganizations()) > 0) return undefined;
    const organization = await this.repo.createOrganization('Default organization', true);
    const workspace = await this.repo.createWorkspace(organization.id, 'Default workspace');
    const user =
      (await this.repo.findUser('admin@localhost')) ?? (await this.repo.createUser('admin@localhost', 'Administrator'));
    await this.repo.addMember(organization.id, user.id, 'owner');
    const key = await this.createKey({
      organizationId: organization.id,
      userId: user.id,
      name: 'default',
      grants: [...allGrants],
    });
    return { organization, workspace, user, key };
  }

  private async organization(id: string): Promise<Organization> {
    const organization = await this.repo.findOrganization(id);
    if (!organization) throw new TenancyError('not_found', `Organization ${id} does not exist`);
    return organization;
  }
}
