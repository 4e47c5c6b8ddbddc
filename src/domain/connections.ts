import type { AuthType } from './catalog.js';

/**
 * connected: live; pending_authorization: OAuth until a person authorizes;
 * needs_reauthorization: OAuth whose provider refused the refresh token (a
 * re-authorization brings it back); revoked: stopped by the workspace.
 */
export type ConnectionStatus = 'connected' | 'pending_authorization' | 'needs_reauthorization' | 'revoked';

/** A connection as stored and read (never with secret values). */
export interface Connection {
  /** The `activeIntegrationId` a workflow's integration_action node names. */
  id: string;
  organizationId: string;
  workspaceId: string;
  name: string;
  description: string | null;
  integrationId: string;
  integrationVersionId: string;
  actionVersionId: string;
  /** The `activeCredentialId`: the stored (encrypted) credential, shareable by later connections. */
  credentialId: string;
  status: ConnectionStatus;
  testActionVersionId: string | null;
  testPassed: boolean | null;
  testError: string | null;
  createdBy: string;
  createdAt: string;
  revokedAt: string | null;
}

/** A stored credential: where it belongs and its ciphertext; decrypting is the service's job. */
export interface StoredCredential {
  id: string;
  organizationId: string;
  workspaceId: string;
  integrationId: string;
  /** The credential template (stable id) and the version its data was checked against. */
  templateId: string;
  templateVersionId: string;
  authType: AuthType;
  dataCiphertext: string;
  /** OAuth: how many token sets were written (0: never authorized); compare-and-set on every write. */
  tokenGeneration: number;
}

/** A credential to store with a new connection: already encrypted. */
export type NewCredential = Omit<StoredCredential, 'id' | 'tokenGeneration'>;

export type NewConnection = Omit<
  Connection,
  'id' | 'credentialId' | 'testPassed' | 'testError' | 'createdAt' | 'revokedAt'
>;

/** What a smoke test concluded. */
export interface SmokeTestOutcome {
  testPassed: boolean;
  testError: string | null;
}
