/** The contract's "Connection check (OAuth)" states. */
export type OAuthAttemptStatus = 'pending' | 'succeeded' | 'failed' | 'expired';

/** One authorization attempt as stored (the token, state and verifier only as hashes or ciphertext). */
export interface OAuthAttempt {
  id: string;
  connectionId: string;
  credentialId: string;
  organizationId: string;
  workspaceId: string;
  verifierCiphertext: string;
  redirectUri: string;
  status: OAuthAttemptStatus;
  error: string | null;
  expiresAt: string;
  claimedAt: string | null;
  createdAt: string;
  finishedAt: string | null;
}

export type NewOAuthAttempt = Omit<OAuthAttempt, 'status' | 'error' | 'claimedAt' | 'finishedAt'> & {
  tokenHash: string;
  stateHash: string;
};
