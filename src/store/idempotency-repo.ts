import type { Db } from './database.js';

/** The key and request of one Idempotency-Key use, as hashes. */
export interface IdempotencyRef {
  organizationId: string;
  /** `api` for the case starts, `hook:<id>` for one hook's deliveries. */
  scope: string;
  keyHash: string;
}

/** The stored row of a key: its request, and its first answer once known. */
export interface StoredIdempotency {
  requestHash: string;
  claimToken: string;
  answer: { status: number; body: unknown } | null;
}

/** Idempotency-Key records (idempotency_keys), shared by every API process. */
export class IdempotencyRepo {
  constructor(private readonly db: Db) {}

  /**
   * Writes a claim unless a live row holds the key (the primary key decides between concurrent claims, on
   * SQLite and Postgres alike), first dropping a row that is older than `notBefore` or a claim whose lease
   * ended (its request died); the row now in force.
   */
  async claim(
    ref: IdempotencyRef,
    claim: { requestHash: string; claimToken: string; leaseUntil: string; now: string; notBefore: string },
  ): Promise<StoredIdempotency | undefined> {
    await this.where(this.db.deleteFrom('idempotency_keys'), ref)
      .where((eb) =>
        eb.or([
          eb('created_at', '<', claim.notBefore),
          eb.and([eb('response_status', 'is', null), eb('lease_until', '<', claim.now)]),
        ]),
      )
      .execute();
    await this.db
      .insertInto('idempotency_keys')
      .values({
        organization_id: ref.organizationId,
        scope: ref.scope,
        key_hash: ref.keyHash,
        request_hash: claim.requestHash,
        claim_token: claim.claimToken,
        response_status: null,
        response_body: null,
        lease_until: claim.leaseUntil,
        created_at: claim.now,
      })
      .onConflict((oc) => oc.columns(['organization_id', 'scope', 'key_hash']).doNothing())
      .execute();
    const row = await this.where(this.db.selectFrom('idempotency_keys').selectAll(), ref).executeTakeFirst();
    if (!row) return undefined;
    return {
      requestHash: row.request_hash,
      claimToken: row.claim_token,
      answer:
        row.response_status === null
          ? null
          : { status: row.response_status, body: JSON.parse(row.response_body ?? 'null') as unknown },
    };
  }

  /** Records the first answer on the claim this request holds. */
  async complete(ref: IdempotencyRef, claimToken: string, answer: { status: number; body: unknown }): Promise<void> {
    await this.where(this.db.updateTable('idempotency_keys'), ref)
      .set({ response_status: answer.status, response_body: JSON.stringify(answer.body) })
      .where('claim_token', '=', claimToken)
      .execute();
  }

  /** Drops the claim this request holds (it failed: the key is free for a retry). */
  async release(ref: IdempotencyRef, claimToken: string): Promise<void> {
    await this.where(this.db.deleteFrom('idempotency_keys'), ref).where('claim_token', '=', claimToken).execute();
  }

  /** Drops every record created before `notBefore`; how many. */
  async purge(notBefore: string): Promise<number> {
    const result = await this.db.deleteFrom('idempotency_keys').where('created_at', '<', notBefore).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  private where<
    Q extends {
      where(column: 'organization_id' | 'scope' | 'key_hash', op: '=', value: string): Q;
    },
  >(query: Q, ref: IdempotencyRef): Q {
    return query
      .where('organization_id', '=', ref.organizationId)
      .where('scope', '=', ref.scope)
      .where('key_hash', '=', ref.keyHash);
  }
}
