import { randomUUID } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { HookMapping, HookMode, HookRecord, HookScheme } from '../domain/hooks.js';
import type { Db } from './database.js';
import { replaceSealedPair } from './sealed-secret-pairs.js';
import { insertWithinLimit, perWorkspace } from './row-limits.js';
import { olderThan, pageOf, type Keyset } from './paging.js';
import type { Page } from '../domain/page.js';
import type { HookTable } from './tables/hooks.js';

/** What a new hook is given; id and times are the store's. */
export type NewHook = Omit<
  HookRecord,
  'id' | 'createdAt' | 'updatedAt' | 'previousSecretCiphertext' | 'previousSecretExpiresAt' | 'secretCiphertext'
>;

/** The fields a PATCH may change. */
export type HookChanges = Partial<
  Pick<
    HookRecord,
    'name' | 'mapping' | 'mode' | 'syncTimeoutMs' | 'toleranceSeconds' | 'rateLimitPerMinute' | 'enabled'
  >
>;

/** A hook's encrypted secrets, as master key rotation reseals them. */
type HookSecretRow = Pick<HookRecord, 'id' | 'secretCiphertext' | 'previousSecretCiphertext'>;

function toHook(r: Selectable<HookTable>): HookRecord {
  return {
    id: r.id,
    organizationId: r.organization_id,
    workspaceId: r.workspace_id,
    workflowId: r.workflow_id,
    name: r.name,
    scheme: r.scheme as HookScheme,
    signatureHeader: r.signature_header,
    mapping: r.mapping === null ? null : (JSON.parse(r.mapping) as HookMapping),
    mode: r.mode as HookMode,
    syncTimeoutMs: r.sync_timeout_ms,
    toleranceSeconds: r.tolerance_seconds,
    rateLimitPerMinute: r.rate_limit_per_minute,
    enabled: r.enabled === 1,
    secretCiphertext: r.secret_ciphertext,
    previousSecretCiphertext: r.previous_secret_ciphertext,
    previousSecretExpiresAt: r.previous_secret_expires_at,
    createdByKeyId: r.created_by_key_id,
    createdByUserId: r.created_by_user_id,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function toSecretRow(
  r: Pick<Selectable<HookTable>, 'id' | 'secret_ciphertext' | 'previous_secret_ciphertext'>,
): HookSecretRow {
  return { id: r.id, secretCiphertext: r.secret_ciphertext, previousSecretCiphertext: r.previous_secret_ciphertext };
}

/** Hooks (inbound webhook triggers); the secrets arrive and leave encrypted. */
export class HookRepo {
  constructor(private readonly db: Db) {}

  /** A new hook id, so its secret can be encrypted bound to it before the row exists. */
  newId(): string {
    return randomUUID();
  }

  /** A new hook, unless its workspace holds `maxPerWorkspace` already ('full': nothing written). */
  async create(
    id: string,
    hook: NewHook,
    secretCiphertext: string,
    maxPerWorkspace: number,
  ): Promise<HookRecord | 'full'> {
    const at = new Date().toISOString();
    const written = await insertWithinLimit(this.db, perWorkspace('hooks', hook.workspaceId, maxPerWorkspace), (trx) =>
      trx
        .insertInto('hooks')
        .values({
          id,
          organization_id: hook.organizationId,
          workspace_id: hook.workspaceId,
          workflow_id: hook.workflowId,
          name: hook.name,
          scheme: hook.scheme,
          signature_header: hook.signatureHeader,
          mapping: hook.mapping === null ? null : JSON.stringify(hook.mapping),
          mode: hook.mode,
          sync_timeout_ms: hook.syncTimeoutMs,
          tolerance_seconds: hook.toleranceSeconds,
          rate_limit_per_minute: hook.rateLimitPerMinute,
          enabled: hook.enabled ? 1 : 0,
          secret_ciphertext: secretCiphertext,
          previous_secret_ciphertext: null,
          previous_secret_expires_at: null,
          created_by_key_id: hook.createdByKeyId,
          created_by_user_id: hook.createdByUserId,
          created_at: at,
          updated_at: at,
        })
        .execute(),
    );
    if (written === 'full') return 'full';
    const created = await this.find(id);
    if (!created) throw new Error(`hook ${id} vanished after creation`);
    return created;
  }

  async find(id: string): Promise<HookRecord | undefined> {
    const row = await this.db.selectFrom('hooks').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toHook(row) : undefined;
  }

  /** A workflow's hooks, newest first, a page at a time. */
  async listForWorkflow(workflowId: string, page: { limit: number; after?: Keyset }): Promise<Page<HookRecord>> {
    const { after } = page;
    return pageOf(page.limit, async (take) => {
      let query = this.db.selectFrom('hooks').selectAll().where('workflow_id', '=', workflowId);
      if (after) query = query.where(olderThan('hooks', after));
      const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(take).execute();
      return rows.map(toHook);
    });
  }

  /** `by`: the key and user deliveries act for from then on (a change that shapes what they start); unchanged without. */
  async update(
    id: string,
    changes: HookChanges,
    by?: Pick<HookRecord, 'createdByKeyId' | 'createdByUserId'>,
  ): Promise<HookRecord | undefined> {
    await this.db
      .updateTable('hooks')
      .set({
        ...(by ? { created_by_key_id: by.createdByKeyId, created_by_user_id: by.createdByUserId } : {}),
        name: changes.name,
        mapping:
          changes.mapping === undefined ? undefined : changes.mapping === null ? null : JSON.stringify(changes.mapping),
        mode: changes.mode,
        sync_timeout_ms: changes.syncTimeoutMs,
        tolerance_seconds: changes.toleranceSeconds,
        rate_limit_per_minute: changes.rateLimitPerMinute,
        enabled: changes.enabled === undefined ? undefined : changes.enabled ? 1 : 0,
        updated_at: new Date().toISOString(),
      })
      .where('id', '=', id)
      .execute();
    return this.find(id);
  }

  /**
   * Replaces the secret if it is still `expected` (a concurrent rotation wins otherwise: false); the old
   * one stays valid until `previousUntil`. `by`: the rotating key and user, whom deliveries act for from then on.
   */
  async rotateSecret(
    id: string,
    expected: string,
    next: string,
    previousUntil: string,
    by: Pick<HookRecord, 'createdByKeyId' | 'createdByUserId'>,
  ): Promise<boolean> {
    const result = await this.db
      .updateTable('hooks')
      .set({
        secret_ciphertext: next,
        previous_secret_ciphertext: expected,
        previous_secret_expires_at: previousUntil,
        created_by_key_id: by.createdByKeyId,
        created_by_user_id: by.createdByUserId,
        updated_at: new Date().toISOString(),
      })
      .where('id', '=', id)
      .where('secret_ciphertext', '=', expected)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Hooks' secrets in id order after `after`, `limit` at a time. */
  async secretPage(after: string, limit: number): Promise<HookSecretRow[]> {
    const rows = await this.db
      .selectFrom('hooks')
      .select(['id', 'secret_ciphertext', 'previous_secret_ciphertext'])
      .where('id', '>', after)
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map(toSecretRow);
  }

  async secretRow(id: string): Promise<HookSecretRow | undefined> {
    const row = await this.db
      .selectFrom('hooks')
      .select(['id', 'secret_ciphertext', 'previous_secret_ciphertext'])
      .where('id', '=', id)
      .executeTakeFirst();
    return row ? toSecretRow(row) : undefined;
  }

  /** Swaps in resealed ciphertexts if the row still holds `row`'s (false when a rotation came between). */
  replaceCiphertexts(row: HookSecretRow, current: string, previous: string | null): Promise<boolean> {
    return replaceSealedPair(this.db, 'hooks', row, current, previous);
  }

  async delete(id: string): Promise<boolean> {
    const result = await this.db.deleteFrom('hooks').where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }
}
