/**
 * Connections: a workspace's live use of a catalog integration. The secret
 * values live in `connection_credentials` (AES-256-GCM ciphertext, bound to
 * the row by its associated data); several connections may share one
 * credential (`activeCredentialId`). The OAuth flow adds its own columns
 * (tokens, state, expiry) here in a later migration: see docs/connections.md.
 */
export interface ConnectionCredentialTable {
  id: string;
  organization_id: string;
  workspace_id: string;
  integration_id: string;
  /** The credential template (stable id) and the version the data was checked against. */
  credential_id: string;
  credential_version_id: string;
  auth_type: string;
  /** `v1:<keyId>:<base64url>` (src/crypto/secret-box.ts) of the JSON credentialData. */
  data_ciphertext: string;
  created_by: string;
  created_at: string;
  updated_at: string;
}

export interface ConnectionTable {
  id: string;
  organization_id: string;
  workspace_id: string;
  name: string;
  description: string | null;
  integration_id: string;
  integration_version_id: string;
  action_version_id: string;
  credential_row_id: string;
  /** connected, pending_authorization (OAuth until authorized), revoked. */
  status: string;
  test_action_version_id: string | null;
  /** 0/1, null when no test ran. */
  test_passed: number | null;
  test_error: string | null;
  created_by: string;
  created_at: string;
  revoked_at: string | null;
}

export interface ConnectionTables {
  connection_credentials: ConnectionCredentialTable;
  connections: ConnectionTable;
}
