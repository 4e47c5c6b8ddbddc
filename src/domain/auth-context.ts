import type { Grant } from './grants.js';

export type KeyScope = { type: 'organization' } | { type: 'workspaces'; workspaceIds: string[] };

/** Who is calling, derived from the API key only; never from the request body. */
export interface AuthContext {
  keyId: string;
  userId: string;
  organizationId: string;
  organizationVerified: boolean;
  scope: KeyScope;
  grants: ReadonlySet<Grant>;
}
