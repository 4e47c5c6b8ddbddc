import { DomainError } from '../errors.js';
import type { TenancyRepo } from '../store/tenancy-repo.js';
import { parseKey, secretMatches } from './api-keys.js';
import type { AuthContext } from './auth-context.js';

/** How often last_used_at is written for a busy key: often enough to audit, rarely enough to stay off the hot path. */
const touchIntervalMs = 60_000;

/**
 * Resolves the caller from a presented key in one query: the key, its
 * organization and the owner's membership. A missing, malformed, unknown,
 * revoked or expired key, or an owner who left the organization, is a 401.
 */
export class KeyAuthentication {
  constructor(private readonly repo: TenancyRepo) {}

  async authenticate(presented: string | undefined): Promise<AuthContext> {
    if (!presented) throw DomainError.unauthorized('Missing API key (x-service-key header)');
    const parsed = parseKey(presented);
    if (!parsed) throw DomainError.unauthorized('Invalid API key');
    const key = await this.repo.findKeyForAuthentication(parsed.id);
    if (!key || !secretMatches(parsed.secret, key.secretHash)) throw DomainError.unauthorized('Invalid API key');
    if (key.revokedAt) throw DomainError.unauthorized('API key has been revoked');
    const now = new Date();
    if (key.expiresAt && new Date(key.expiresAt) <= now) throw DomainError.unauthorized('API key has expired');
    if (!key.ownerIsMember) throw DomainError.unauthorized("The key's user is no longer a member of the organization");
    if (!key.lastUsedAt || now.getTime() - new Date(key.lastUsedAt).getTime() > touchIntervalMs) {
      await this.repo.touchKey(key.id, now.toISOString());
    }
    return {
      keyId: key.id,
      userId: key.userId,
      organizationId: key.organizationId,
      organizationVerified: key.organizationVerified,
      scope: key.scope,
      grants: new Set(key.grants),
    };
  }
}
