import type { Generated } from 'kysely';

/**
 * Connections: a workspace's live use of a catalog integration. The secret
 * values live in `connection_credentials` (AES-256-GCM ciphertext, bound to
 * the row by its associated data); several connections may share one
 * credential (`activeCredentialId`). OAuth: the provider's tokens live inside
 * the credential's ciphertext, `token_generation` counts them (0: never
 * authorized), and each authorization attempt is a row of `oauth_attempts`.
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
  /** OAuth: bumped by every write of new tokens (compare-and-set); 0 until authorized. */
  token_generation: Generated<number>;
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
  /** connected, pending_authorization (OAuth until authorized), needs_reauthorization (OAuth), revoked. */
  status: string;
  test_action_version_id: string | null;
  /** 0/1, null when no test ran. */
  test_passed: number | null;
  test_error: string | null;
  created_by: string;
  created_at: string;
  revoked_at: string | null;
}

/** One OAuth authorization attempt: the connection token and state are stored as SHA-256 hex only. */
export interface OAuthAttemptTable {
  id: string;
  connection_id: string;
  credential_row_id: string;
  organization_id: string;
  workspace_id: string;
  token_hash: string;
  state_hash: string;
  /** The PKCE code verifier, sealed (src/crypto/secret-box.ts) to this attempt. */
  verifier_ciphertext: string;
  redirect_uri: string;
  /** pending, succeeded, failed, expired. */
  status: string;
  error: string | null;
  expires_at: string;
  /** Set once when the provider's redirect arrives with the state (single use). */
  claimed_at: string | null;
  created_at: string;
  finished_at: string | null;
}

export interface ConnectionTables {
  connection_credentials: ConnectionCredentialTable;
  connections: ConnectionTable;
  oauth_attempts: OAuthAttemptTable;
}
