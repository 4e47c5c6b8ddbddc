import type { Selectable } from 'kysely';
import type { EventSubscription } from '../domain/events.js';
import type { Db } from './database.js';
import { replaceSealedPair } from './sealed-secret-pairs.js';
import { insertWithinLimit, perWorkspace } from './row-limits.js';
import { olderThan, pageOf, type Keyset, type ListScope } from './paging.js';
import type { Page } from '../domain/page.js';
import type { EventSubscriptionTable } from './tables/subscriptions.js';

/** A subscription with its (encrypted) signing secrets, for signing and rotation only. */
export interface SubscriptionSecretRow {
  id: string;
  secretCiphertext: string;
  previousSecretCiphertext: string | null;
  previousExpiresAt: string | null;
}

export interface NewSubscription extends Omit<EventSubscription, 'createdAt' | 'updatedAt'> {
  secretCiphertext: string;
}

export type SubscriptionChanges = Partial<
  Pick<EventSubscription, 'url' | 'eventTypes' | 'description' | 'enabled' | 'createdByKeyId'>
>;

function toSubscription(r: Selectable<EventSubscriptionTable>): EventSubscription {
  return {
    id: r.id,
    organizationId: r.organization_id,
    workspaceId: r.workspace_id,
    url: r.url,
    eventTypes: JSON.parse(r.event_types) as string[],
    description: r.description,
    enabled: r.enabled === 1,
    createdByKeyId: r.created_by_key_id,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function toSecretRow(
  r: Pick<
    Selectable<EventSubscriptionTable>,
    'id' | 'secret_ciphertext' | 'previous_secret_ciphertext' | 'previous_expires_at'
  >,
): SubscriptionSecretRow {
  return {
    id: r.id,
    secretCiphertext: r.secret_ciphertext,
    previousSecretCiphertext: r.previous_secret_ciphertext,
    previousExpiresAt: r.previous_expires_at,
  };
}

const now = () => new Date().toISOString();

/** Event subscriptions and their encrypted signing secrets. */
export class SubscriptionRepo {
  constructor(private readonly db: Db) {}

  /** A new subscription, unless its workspace holds `maxPerWorkspace` already ('full': nothing written). */
  async create(subscription: NewSubscription, maxPerWorkspace: number): Promise<EventSubscription | 'full'> {
    const at = now();
    const row = {
      id: subscription.id,
      organization_id: subscription.organizationId,
      workspace_id: subscription.workspaceId,
      url: subscription.url,
      event_types: JSON.stringify(subscription.eventTypes),
      description: subscription.description,
      enabled: subscription.enabled ? 1 : 0,
      secret_ciphertext: subscription.secretCiphertext,
      previous_secret_ciphertext: null,
      previous_expires_at: null,
      created_by_key_id: subscription.createdByKeyId,
      created_at: at,
      updated_at: at,
    };
    const limit = perWorkspace('event_subscriptions', subscription.workspaceId, maxPerWorkspace);
    return insertWithinLimit(this.db, limit, async (trx) => {
      await trx.insertInto('event_subscriptions').values(row).execute();
      return toSubscription(row);
    });
  }

  async find(id: string): Promise<EventSubscription | undefined> {
    const r = await this.db.selectFrom('event_subscriptions').selectAll().where('id', '=', id).executeTakeFirst();
    return r && toSubscription(r);
  }

  /** Subscriptions newest first, one page after `after`, within the lister's scope. */
  async list(scope: ListScope & { after?: Keyset; limit: number }): Promise<Page<EventSubscription>> {
    return pageOf(scope.limit, async (take) => {
      let query = this.db
        .selectFrom('event_subscriptions')
        .selectAll()
        .where('organization_id', '=', scope.organizationId);
      if (scope.workspaceIds) query = query.where('workspace_id', 'in', scope.workspaceIds);
      if (scope.after) query = query.where(olderThan('event_subscriptions', scope.after));
      const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(take).execute();
      return rows.map(toSubscription);
    });
  }

  /** The workspace's enabled subscriptions (what a case end there is delivered to). */
  async listEnabled(workspaceId: string): Promise<EventSubscription[]> {
    const rows = await this.db
      .selectFrom('event_subscriptions')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('enabled', '=', 1)
      .execute();
    return rows.map(toSubscription);
  }

  async update(id: string, changes: SubscriptionChanges): Promise<EventSubscription | undefined> {
    await this.db
      .updateTable('event_subscriptions')
      .set({
        ...(changes.url !== undefined ? { url: changes.url } : {}),
        ...(changes.eventTypes !== undefined ? { event_types: JSON.stringify(changes.eventTypes) } : {}),
        ...(changes.description !== undefined ? { description: changes.description } : {}),
        ...(changes.enabled !== undefined ? { enabled: changes.enabled ? 1 : 0 } : {}),
        ...(changes.createdByKeyId !== undefined ? { created_by_key_id: changes.createdByKeyId } : {}),
        updated_at: now(),
      })
      .where('id', '=', id)
      .execute();
    return this.find(id);
  }

  async delete(id: string): Promise<void> {
    await this.db.deleteFrom('event_subscriptions').where('id', '=', id).execute();
  }

  async findSecrets(id: string): Promise<SubscriptionSecretRow | undefined> {
    const r = await this.secretRows().where('id', '=', id).executeTakeFirst();
    return r && toSecretRow(r);
  }

  private secretRows() {
    return this.db
      .selectFrom('event_subscriptions')
      .select(['id', 'secret_ciphertext', 'previous_secret_ciphertext', 'previous_expires_at']);
  }

  async secretPage(after: string, limit: number): Promise<SubscriptionSecretRow[]> {
    const rows = await this.secretRows().where('id', '>', after).orderBy('id').limit(limit).execute();
    return rows.map(toSecretRow);
  }

  async secretRow(id: string): Promise<SubscriptionSecretRow | undefined> {
    return this.findSecrets(id);
  }

  /** Swaps in resealed ciphertexts if the row still holds `row`'s (false when a rotation came between). */
  replaceCiphertexts(row: SubscriptionSecretRow, current: string, previous: string | null): Promise<boolean> {
    return replaceSealedPair(this.db, 'event_subscriptions', row, current, previous);
  }

  /**
   * Replaces the secret only if it is still `expectedCiphertext` (two rotations racing cannot both keep
   * "their" previous secret); the old one stays valid for signing until `previousExpiresAt`.
   */
  async rotateSecret(
    id: string,
    expectedCiphertext: string,
    secretCiphertext: string,
    previousExpiresAt: string,
  ): Promise<boolean> {
    const result = await this.db
      .updateTable('event_subscriptions')
      .set({
        secret_ciphertext: secretCiphertext,
        previous_secret_ciphertext: expectedCiphertext,
        previous_expires_at: previousExpiresAt,
        updated_at: now(),
      })
      .where('id', '=', id)
      .where('secret_ciphertext', '=', expectedCiphertext)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }
}
