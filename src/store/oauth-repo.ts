import type { Selectable } from 'kysely';
import type { NewOAuthAttempt, OAuthAttempt, OAuthAttemptStatus } from '../domain/oauth-attempts.js';
import type { Db } from './database.js';
import type { OAuthAttemptTable } from './tables/connections.js';

function toAttempt(row: Selectable<OAuthAttemptTable>): OAuthAttempt {
  return {
    id: row.id,
    connectionId: row.connection_id,
    credentialId: row.credential_row_id,
    organizationId: row.organization_id,
    workspaceId: row.workspace_id,
    verifierCiphertext: row.verifier_ciphertext,
    redirectUri: row.redirect_uri,
    status: row.status as OAuthAttemptStatus,
    error: row.error,
    expiresAt: row.expires_at,
    claimedAt: row.claimed_at,
    createdAt: row.created_at,
    finishedAt: row.finished_at,
  };
}

/** Reads and writes OAuth authorization attempts; every change of state is a compare-and-set. */
export class OAuthRepo {
  constructor(private readonly db: Db) {}

  async create(attempt: NewOAuthAttempt): Promise<void> {
    await this.db
      .insertInto('oauth_attempts')
      .values({
        id: attempt.id,
        connection_id: attempt.connectionId,
        credential_row_id: attempt.credentialId,
        organization_id: attempt.organizationId,
        workspace_id: attempt.workspaceId,
        token_hash: attempt.tokenHash,
        state_hash: attempt.stateHash,
        verifier_ciphertext: attempt.verifierCiphertext,
        redirect_uri: attempt.redirectUri,
        status: 'pending',
        error: null,
        expires_at: attempt.expiresAt,
        claimed_at: null,
        created_at: attempt.createdAt,
        finished_at: null,
      })
      .execute();
  }

  async find(id: string): Promise<OAuthAttempt | undefined> {
    const row = await this.db.selectFrom('oauth_attempts').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toAttempt(row);
  }

  async findByTokenHash(tokenHash: string): Promise<OAuthAttempt | undefined> {
    const row = await this.db
      .selectFrom('oauth_attempts')
      .selectAll()
      .where('token_hash', '=', tokenHash)
      .executeTakeFirst();
    return row && toAttempt(row);
  }

  async findByStateHash(stateHash: string): Promise<OAuthAttempt | undefined> {
    const row = await this.db
      .selectFrom('oauth_attempts')
      .selectAll()
      .where('state_hash', '=', stateHash)
      .executeTakeFirst();
    return row && toAttempt(row);
  }

  /** Uses the state once: only a pending, unclaimed, unexpired attempt is claimed; false otherwise. */
  async claim(stateHash: string, at: string): Promise<boolean> {
    const result = await this.db
      .updateTable('oauth_attempts')
      .set({ claimed_at: at })
      .where('state_hash', '=', stateHash)
      .where('status', '=', 'pending')
      .where('claimed_at', 'is', null)
      .where('expires_at', '>', at)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /** pending → the outcome, once; false when the attempt had already ended. */
  async finish(id: string, status: Exclude<OAuthAttemptStatus, 'pending'>, error: string | null): Promise<boolean> {
    let update = this.db
      .updateTable('oauth_attempts')
      .set({ status, error, finished_at: new Date().toISOString() })
      .where('id', '=', id)
      .where('status', '=', 'pending');
    // A claimed attempt is mid-exchange: the redirect that claimed it records its outcome.
    if (status === 'expired') update = update.where('claimed_at', 'is', null);
    const result = await update.executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /** Attempts in id order with their sealed verifiers, a page at a time (master key rotation). */
  async verifierPage(afterId: string, limit: number): Promise<Array<Pick<OAuthAttempt, 'id' | 'verifierCiphertext'>>> {
    const rows = await this.db
      .selectFrom('oauth_attempts')
      .select(['id', 'verifier_ciphertext'])
      .where('id', '>', afterId)
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map((row) => ({ id: row.id, verifierCiphertext: row.verifier_ciphertext }));
  }

  /** Swaps an attempt's sealed verifier if it is still the one read (compare-and-set); false otherwise. */
  async replaceVerifier(id: string, expected: string, next: string): Promise<boolean> {
    const result = await this.db
      .updateTable('oauth_attempts')
      .set({ verifier_ciphertext: next })
      .where('id', '=', id)
      .where('verifier_ciphertext', '=', expected)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }
}
