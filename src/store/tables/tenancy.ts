/**
 * Tenancy tables. Conventions shared by every table (so one schema serves
 * SQLite and Postgres): ids are UUID strings, timestamps ISO 8601 text,
 * booleans 0/1 integers, structured values JSON text.
 */
export interface OrganizationTable {
  id: string;
  name: string;
  verified: number;
  created_at: string;
}

export interface WorkspaceTable {
  id: string;
  organization_id: string;
  name: string;
  created_at: string;
}

export interface UserTable {
  id: string;
  email: string;
  name: string;
  created_at: string;
}

export interface MembershipTable {
  organization_id: string;
  user_id: string;
  role: string;
  created_at: string;
}

export interface ApiKeyTable {
  id: string;
  organization_id: string;
  user_id: string;
  name: string;
  /** sha256 of the secret part; the key itself is shown once and never stored. */
  secret_hash: string;
  /** 'organization' or 'workspaces' */
  scope_type: string;
  /** JSON array of workspace ids when scope_type is 'workspaces' */
  workspace_ids: string;
  /** JSON array of grants */
  grants: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
  created_at: string;
}

export interface TenancyTables {
  organizations: OrganizationTable;
  workspaces: WorkspaceTable;
  users: UserTable;
  memberships: MembershipTable;
  api_keys: ApiKeyTable;
}
