import type { Request } from 'express';
import type { Db } from '../store/database.js';
import { DomainError } from '../errors.js';
import { parseKey, secretMatches } from './api-keys.js';
import type { AuthContext, KeyScope } from './auth-context.js';
import type { Grant } from './grants.js';

/** How often last_used_at is written for a busy key: often enough to audit, rarely enough to stay off the hot path. */
const touchIntervalMs = 60_000;

/** The key from `x-service-key`, or `Authorization: Bearer <key>` (accepted on every endpoint). */
export function presentedKey(req: Request): string | undefined {
  const header = req.headers['x-service-key'];
  if (typeof header === 'string' && header.length > 0) return header;
  const authorization = req.headers.authorization;
  if (authorization?.startsWith('Bearer ')) return authorization.slice(7);
  return undefined;
}

/**
 * Resolves the caller from the key in one query: the key, its organization and
 * the owner's membership. A missing, malformed, unknown, revoked or expired
 * key, or an owner who left the organization, is a 401.
 */
export function createAuthenticator(db: Db): (req: Request) => Promise<AuthContext> {
  return async (req) => {
    if (req.auth) return req.auth;
    const presented = presentedKey(req);
    if (!presented) throw DomainError.unauthorized('Missing API key (x-service-key header)');
    const parsed = parseKey(presented);
    if (!parsed) throw DomainError.unauthorized('Invalid API key');
    const row = await db
      .selectFrom('api_keys')
      .innerJoin('organizations', 'organizations.id', 'api_keys.organization_id')
      .leftJoin('memberships', (join) =>
        join
          .onRef('memberships.organization_id', '=', 'api_keys.organization_id')
          .onRef('memberships.user_id', '=', 'api_keys.user_id'),
      )
      .select([
        'api_keys.id',
        'api_keys.user_id',
        'api_keys.organization_id',
        'api_keys.secret_hash',
        'api_keys.scope_type',
        'api_keys.workspace_ids',
        'api_keys.grants',
        'api_keys.expires_at',
        'api_keys.revoked_at',
        'api_keys.last_used_at',
        'organizations.verified',
        'memberships.user_id as member_id',
      ])
      .where('api_keys.id', '=', parsed.id)
      .executeTakeFirst();
    if (!row || !secretMatches(parsed.secret, row.secret_hash)) throw DomainError.unauthorized('Invalid API key');
    if (row.revoked_at) throw DomainError.unauthorized('API key has been revoked');
    const now = new Date();
    if (row.expires_at && new Date(row.expires_at) <= now) throw DomainError.unauthorized('API key has expired');
    if (!row.member_id) throw DomainError.unauthorized("The key's user is no longer a member of the organization");
    if (!row.last_used_at || now.getTime() - new Date(row.last_used_at).getTime() > touchIntervalMs) {
      await db.updateTable('api_keys').set({ last_used_at: now.toISOString() }).where('id', '=', row.id).execute();
    }
    const scope: KeyScope =
      row.scope_type === 'organization'
        ? { type: 'organization' }
        : { type: 'workspaces', workspaceIds: JSON.parse(row.workspace_ids) as string[] };
    const auth: AuthContext = {
      keyId: row.id,
      userId: row.user_id,
      organizationId: row.organization_id,
      organizationVerified: row.verified === 1,
      scope,
      grants: new Set(JSON.parse(row.grants) as Grant[]),
    };
    req.auth = auth;
    return auth;
  };
}
