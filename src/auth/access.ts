import { DomainError } from '../errors.js';
import { decodeCursor, type Keyset, type ListScope } from '../store/paging.js';
import type { TenancyRepo, Workspace } from '../store/tenancy-repo.js';
import type { AuthContext } from '../domain/auth-context.js';
import { grantSatisfied, type Grant } from '../domain/grants.js';

const grantLabels: Record<Grant, string> = {
  'workflow:read': 'Workflow: Read',
  'workflow:full': 'Workflow: Full',
  'case:read': 'Case: Read',
  'case:full': 'Case: Full',
  'file:read': 'File: Read',
  'file:full': 'File: Full',
  'integration:read': 'Integration: Read',
  'integration:full': 'Integration: Full',
  'code:full': 'Code: Full',
  'discovery:read': 'Discovery: Read',
  'discovery:full': 'Discovery: Full',
};

/** The grant as people read it ("Case: Full"). */
export function grantLabel(grant: Grant): string {
  return grantLabels[grant];
}

export function hasGrant(auth: AuthContext, grant: Grant): boolean {
  return grantSatisfied(auth.grants, grant);
}

/** The key holds the grant (403 otherwise), wherever it applies. */
export function assertGrant(auth: AuthContext, grant: Grant): void {
  if (!hasGrant(auth, grant)) throw DomainError.forbidden(`This API key lacks ${grantLabels[grant]}`);
}

/**
 * Organization-level permission (catalog authoring): the key must be scoped to
 * the whole organization, hold the grant, and where asked the organization
 * must be verified.
 */
export function requireOrganizationGrant(auth: AuthContext, grant: Grant, options: { verified?: boolean } = {}): void {
  if (auth.scope.type !== 'organization') throw DomainError.forbidden('This API key is not organization-scoped');
  assertGrant(auth, grant);
  if (options.verified && !auth.organizationVerified) throw DomainError.forbidden('The organization is not verified');
}

/** Whether the key reaches this workspace with this grant (no lookup, no throw). */
export function canUseWorkspace(
  auth: AuthContext,
  workspace: Pick<Workspace, 'id' | 'organizationId'>,
  grant: Grant,
): boolean {
  if (workspace.organizationId !== auth.organizationId) return false;
  if (auth.scope.type === 'workspaces' && !auth.scope.workspaceIds.includes(workspace.id)) return false;
  return hasGrant(auth, grant);
}

/** Workspace-level permission on a workspace already loaded: 403 with the reason. */
export function assertWorkspaceGrant(
  auth: AuthContext,
  workspace: Pick<Workspace, 'id' | 'organizationId'>,
  grant: Grant,
): void {
  if (workspace.organizationId !== auth.organizationId)
    throw DomainError.forbidden('The workspace belongs to another organization');
  if (auth.scope.type === 'workspaces' && !auth.scope.workspaceIds.includes(workspace.id)) {
    throw DomainError.forbidden('This API key has no access to the workspace');
  }
  if (!hasGrant(auth, grant)) throw DomainError.forbidden(`This API key lacks ${grantLabels[grant]} in the workspace`);
}

/** Loads the workspace (404 when it does not exist) and checks the grant in it (403). */
export async function requireWorkspaceGrant(
  tenancy: TenancyRepo,
  auth: AuthContext,
  workspaceId: string,
  grant: Grant,
): Promise<Workspace> {
  const workspace = await tenancy.findWorkspace(workspaceId);
  if (!workspace) throw DomainError.notFound(`Workspace ${workspaceId} does not exist`);
  assertWorkspaceGrant(auth, workspace, grant);
  return workspace;
}

/** What a list asks for: optionally one workspace, and a cursor the service gave out. */
export interface ListRequest {
  workspaceId?: string;
  cursor?: string;
  limit: number;
}

/**
 * Where a list looks for this key: its organization, narrowed to the asked
 * workspace and, for a workspace-scoped key, to its workspaces. Undefined when
 * that leaves none (another organization's workspace, one outside the scope):
 * the list is then empty, disclosing nothing. 403 without the grant.
 */
export function listScope(
  auth: AuthContext,
  grant: Grant,
  request: ListRequest,
): (ListScope & { after?: Keyset; limit: number }) | undefined {
  assertGrant(auth, grant);
  const after = request.cursor === undefined ? undefined : decodeCursor(request.cursor);
  if (request.cursor !== undefined && !after)
    throw DomainError.invalidFields([{ field: 'query.cursor', message: 'not a cursor this list gave out' }]);
  const page = { organizationId: auth.organizationId, after, limit: request.limit };
  const scoped = auth.scope.type === 'workspaces' ? auth.scope.workspaceIds : undefined;
  const asked = request.workspaceId;
  if (asked === undefined) return scoped?.length === 0 ? undefined : { ...page, workspaceIds: scoped };
  return scoped && !scoped.includes(asked) ? undefined : { ...page, workspaceIds: [asked] };
}
