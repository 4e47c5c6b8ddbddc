import { hash } from 'node:crypto';
import { ShortLivedCache, type ShortLivedCacheOptions } from '../caching/short-lived-cache.js';
import { DomainError } from '../errors.js';
import type { KeyForAuthentication, TenancyRepo } from '../store/tenancy-repo.js';
import { parseKey, secretMatches } from './api-keys.js';
import { canUseWorkspace, grantLabel } from './access.js';
import type { AuthContext } from '../domain/auth-context.js';
import { grantSatisfied, type Grant } from '../domain/grants.js';

/** How often last_used_at is written for a busy key: often enough to audit, rarely enough to stay off the hot path. */
const touchIntervalMs = 60_000;

/** ttlMs: how long a successful lookup is reused (config keyCacheMs, at most 1 s; 0 turns the cache off). */
export type KeyCacheOptions = ShortLivedCacheOptions;

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
  private readonly cache: ShortLivedCache<string, AuthContext>;

  constructor(
    private readonly repo: TenancyRepo,
    options: KeyCacheOptions = { ttlMs: 0, maxEntries: 0 },
  ) {
    this.cache = new ShortLivedCache(options);
  }

  async authenticate(presented: string | undefined): Promise<AuthContext> {
    if (!presented) throw DomainError.unauthorized('Missing API key (x-service-key header)');
    const cacheKey = hash('sha256', presented, 'base64');
    const hit = this.cache.get(cacheKey);
    if (hit) return hit;
    const parsed = parseKey(presented);
    if (!parsed) throw DomainError.unauthorized('Invalid API key');
    const read = this.cache.beginRead();
    const key = await this.repo.findKeyForAuthentication(parsed.id);
    if (!key || !secretMatches(parsed.secret, key.secretHash)) throw DomainError.unauthorized('Invalid API key');
    const now = new Date();
    const context = contextOf(key, now);
    if (!key.lastUsedAt || now.getTime() - new Date(key.lastUsedAt).getTime() > touchIntervalMs) {
      await this.repo.touchKey(key.id, now.toISOString());
    }
    // An expiring key is never served past its expiry.
    this.cache.set(cacheKey, context, read, key.expiresAt ? Date.parse(key.expiresAt) : Infinity);
    return context;
  }

  /**
   * The caller again, by key id, for work it started that goes on without it
   * (a bulk rerun acting as its key): the same checks as a request, from the
   * store each time, so a key revoked or expired since stops the work.
   */
  async resume(keyId: string): Promise<AuthContext> {
    const key = await this.repo.findKeyForAuthentication(keyId);
    if (!key) throw DomainError.unauthorized('API key no longer exists');
    return contextOf(key, new Date());
  }

  /**
   * Who a schedule's firing or a hook's delivery acts as: the key that created it, as it stands
   * now (403 naming why when it was revoked, expired or its user left), reaching `workspaceId`
   * only and holding only those of `grants` the key itself holds (or holds stronger).
   */
  async actingFor(keyId: string, what: string, workspaceId: string, grants: Grant[]): Promise<AuthContext> {
    const key = await this.resume(keyId).catch((err: unknown) => {
      if (err instanceof DomainError)
        throw DomainError.forbidden(`The API key that created ${what} can no longer be used: ${err.message}`);
      throw err;
    });
    const reaches = key.scope.type === 'organization' || key.scope.workspaceIds.includes(workspaceId);
    return {
      ...key,
      scope: { type: 'workspaces', workspaceIds: reaches ? [workspaceId] : [] },
      grants: new Set(grants.filter((grant) => grantSatisfied(key.grants, grant))),
    };
  }

  /**
   * Why the key that created `what` (a case, a completion link, an event subscription) may no longer act for
   * it: revoked, expired, its user gone, or no longer holding `grant` in the workspace; null when it still may.
   */
  async refusal(
    keyId: string,
    what: string,
    workspace: { id: string; organizationId: string },
    grant: Grant,
  ): Promise<string | null> {
    try {
      const creator = await this.actingFor(keyId, what, workspace.id, [grant]);
      return canUseWorkspace(creator, workspace, grant)
        ? null
        : `The API key that created ${what} no longer reaches its workspace with ${grantLabel(grant)}`;
    } catch (err) {
      if (err instanceof DomainError && err.errorCode === 'FORBIDDEN') return err.message;
      throw err;
    }
  }

  /** Drops a key's cached lookups (every key's without an id): its access changed through this process. */
  forget(keyId?: string): void {
    this.cache.deleteWhere(keyId === undefined ? undefined : (context) => context.keyId === keyId);
  }
}

/** The context of a key found by id, once it shows valid at `now`: not revoked, not expired, its owner a member. */
function contextOf(key: KeyForAuthentication, now: Date): AuthContext {
  if (key.revokedAt) throw DomainError.unauthorized('API key has been revoked');
  if (key.expiresAt && new Date(key.expiresAt) <= now) throw DomainError.unauthorized('API key has expired');
  if (!key.ownerIsMember) throw DomainError.unauthorized("The key's user is no longer a member of the organization");
  return {
    keyId: key.id,
    userId: key.userId,
    organizationId: key.organizationId,
    organizationVerified: key.organizationVerified,
    scope: key.scope,
    grants: new Set(key.grants),
  };
}
