import { createHash } from 'node:crypto';
import { DomainError } from '../errors.js';
import type { TenancyRepo } from '../store/tenancy-repo.js';
import { parseKey, secretMatches } from './api-keys.js';
import type { AuthContext } from './auth-context.js';

/** How often last_used_at is written for a busy key: often enough to audit, rarely enough to stay off the hot path. */
const touchIntervalMs = 60_000;

export interface KeyCacheOptions {
  /** How long a successful lookup is reused (config keyCacheMs, at most 1 s; 0 turns the cache off). */
  ttlMs: number;
  /** The oldest entries go first beyond this many. */
  maxEntries: number;
}

/**
 * Resolves the caller from a presented key in one query: the key, its
 * organization and the owner's membership. A missing, malformed, unknown,
 * revoked or expired key, or an owner who left the organization, is a 401.
 *
 * A successful lookup is reused for ttlMs (keyed by a hash of the presented
 * key, never the key itself), which takes a store round trip off every
 * request of a busy client. A revocation through this process drops it at
 * once (forget); one made elsewhere takes effect within ttlMs.
 */
export class KeyAuthentication {
  private readonly cache = new Map<string, { context: AuthContext; until: number }>();

  constructor(
    private readonly repo: TenancyRepo,
    private readonly options: KeyCacheOptions = { ttlMs: 0, maxEntries: 0 },
  ) {}

  async authenticate(presented: string | undefined): Promise<AuthContext> {
    if (!presented) throw DomainError.unauthorized('Missing API key (x-service-key header)');
    const cacheKey = createHash('sha256').update(presented).digest('base64');
    const hit = this.cache.get(cacheKey);
    if (hit && hit.until > Date.now()) return hit.context;
    this.cache.delete(cacheKey);
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
    const context: AuthContext = {
      keyId: key.id,
      userId: key.userId,
      organizationId: key.organizationId,
      organizationVerified: key.organizationVerified,
      scope: key.scope,
      grants: new Set(key.grants),
    };
    this.remember(cacheKey, context, key.expiresAt ? Date.parse(key.expiresAt) : Infinity);
    return context;
  }

  /** Drops a key's cached lookups (every key's without an id): its access changed through this process. */
  forget(keyId?: string): void {
    if (keyId === undefined) this.cache.clear();
    for (const [cacheKey, entry] of this.cache) if (entry.context.keyId === keyId) this.cache.delete(cacheKey);
  }

  private remember(cacheKey: string, context: AuthContext, expiresAt: number): void {
    const { ttlMs, maxEntries } = this.options;
    if (ttlMs <= 0 || maxEntries <= 0) return;
    while (this.cache.size >= maxEntries) {
      const oldest = this.cache.keys().next().value;
      if (oldest === undefined) break;
      this.cache.delete(oldest);
    }
    // An expiring key is never served past its expiry.
    this.cache.set(cacheKey, { context, until: Math.min(Date.now() + ttlMs, expiresAt) });
  }
}
