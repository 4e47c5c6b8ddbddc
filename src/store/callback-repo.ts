import { PostgresAdapter, sql, type Insertable, type QueryCreator, type Selectable } from 'kysely';
import type { CallbackAttempt, CallbackDelivery, DeliveryStatus } from '../domain/callback-records.js';
import type { Db } from './database.js';
import { CompiledStatement } from './compiled-statement.js';
import { olderThan, pageOf, type Keyset } from './paging.js';
import type { Page } from '../domain/page.js';
import type { Database } from './schema.js';
import type { CallbackDeliveryTable, WebhookSecretTable } from './tables/callbacks.js';

export interface NewDelivery {
  id: string;
  caseId: string;
  workspaceId: string;
  url: string;
  body: string;
  workflowId: string;
  subscriptionId?: string;
}

export interface AttemptRecord extends CallbackAttempt {
  deliveryId: string;
  /** The delivery's state after this attempt. */
  status: DeliveryStatus;
  nextAttemptAt: string | null;
}

/** Where a walk through overdue deliveries stands: the last row's due time and id (ids break ties). */
export interface DueKeyset {
  dueAt: string;
  id: string;
}

export interface WebhookSecretRow {
  workspaceId: string;
  secretCiphertext: string;
  previousSecretCiphertext: string | null;
  previousExpiresAt: string | null;
  createdAt: string;
  rotatedAt: string | null;
}

function toWebhookSecret(r: Selectable<WebhookSecretTable>): WebhookSecretRow {
  return {
    workspaceId: r.workspace_id,
    secretCiphertext: r.secret_ciphertext,
    previousSecretCiphertext: r.previous_secret_ciphertext,
    previousExpiresAt: r.previous_expires_at,
    createdAt: r.created_at,
    rotatedAt: r.rotated_at,
  };
}

function toDelivery(r: Selectable<CallbackDeliveryTable>): CallbackDelivery {
  return {
    id: r.id,
    caseId: r.case_id,
    workspaceId: r.workspace_id,
    url: r.url,
    body: r.body,
    status: r.status as DeliveryStatus,
    attempts: r.attempts,
    nextAttemptAt: r.next_attempt_at,
    workflowId: r.workflow_id,
    subscriptionId: r.subscription_id,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

const now = () => new Date().toISOString();

/** A new delivery's row: pending, no attempt yet, due now (also written by the case end's transaction). */
export function pendingDeliveryRow(delivery: NewDelivery, at: string): Insertable<CallbackDeliveryTable> {
  return {
    id: delivery.id,
    case_id: delivery.caseId,
    workspace_id: delivery.workspaceId,
    url: delivery.url,
    body: delivery.body,
    status: 'pending',
    attempts: 0,
    next_attempt_at: at,
    workflow_id: delivery.workflowId,
    subscription_id: delivery.subscriptionId ?? null,
    created_at: at,
    updated_at: at,
  };
}

/** What recording an attempt writes: the attempt's row, and the delivery's state after it. */
type AttemptValues = AttemptRecord & { updatedAt: string };

/** The attempt's row; a retried activity's second record of the same attempt replaces the first. */
function insertAttempt(db: QueryCreator<Database>, v: AttemptValues) {
  const values = {
    started_at: v.startedAt,
    duration_ms: v.durationMs,
    response_status: v.responseStatus,
    response_body: v.responseBody,
    error: v.error,
  };
  return db
    .insertInto('callback_attempts')
    .values({ delivery_id: v.deliveryId, attempt: v.attempt, ...values })
    .onConflict((oc) => oc.columns(['delivery_id', 'attempt']).doUpdateSet(values));
}

/** The delivery's state after the attempt. */
function deliveryState(v: AttemptValues) {
  return { status: v.status, attempts: v.attempt, next_attempt_at: v.nextAttemptAt, updated_at: v.updatedAt };
}

/** Callback deliveries, their attempts, and the workspaces' (encrypted) signing secrets. */
export class CallbackRepo {
  /**
   * recordAttempt's statements, which every callback runs, compiled once (compiled-statement.ts): the attempt, the
   * delivery's state after it, and on Postgres both in one statement.
   */
  private readonly attemptStatements = {
    attempt: new CompiledStatement(insertAttempt),
    deliveryState: new CompiledStatement((db, v: AttemptValues) =>
      db.updateTable('callback_deliveries').set(deliveryState(v)).where('id', '=', v.deliveryId),
    ),
    both: new CompiledStatement((db, v: AttemptValues) =>
      db
        .with('attempt', (cte) => insertAttempt(cte, v))
        .updateTable('callback_deliveries')
        .set(deliveryState(v))
        .where('id', '=', v.deliveryId),
    ),
  };

  constructor(private readonly db: Db) {}

  /** Inserts a pending delivery; a second call with the same id changes nothing (workflow retries, API + activity). */
  async createDelivery(delivery: NewDelivery): Promise<void> {
    const at = now();
    await this.db
      .insertInto('callback_deliveries')
      .values(pendingDeliveryRow(delivery, at))
      // Idempotent; a delivery the case run began and a retry workflow carries on names that workflow.
      .onConflict((oc) => oc.column('id').doUpdateSet({ workflow_id: delivery.workflowId, updated_at: at }))
      .execute();
  }

  async deleteDelivery(id: string): Promise<void> {
    await this.db.deleteFrom('callback_deliveries').where('id', '=', id).execute();
  }

  async findDelivery(id: string): Promise<CallbackDelivery | undefined> {
    const row = await this.db.selectFrom('callback_deliveries').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toDelivery(row);
  }

  /** A case's callback deliveries (to its callbackUrl: not the subscriptions'), oldest first. */
  async listDeliveries(caseId: string): Promise<CallbackDelivery[]> {
    const rows = await this.db
      .selectFrom('callback_deliveries')
      .selectAll()
      .where('case_id', '=', caseId)
      .where('subscription_id', 'is', null)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(toDelivery);
  }

  /** A subscription's deliveries, newest first, one page after `after`. */
  async listSubscriptionDeliveries(
    subscriptionId: string,
    after: Keyset | undefined,
    limit: number,
  ): Promise<Page<CallbackDelivery>> {
    return pageOf(limit, async (take) => {
      let query = this.db.selectFrom('callback_deliveries').selectAll().where('subscription_id', '=', subscriptionId);
      if (after) query = query.where(olderThan('callback_deliveries', after));
      const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(take).execute();
      return rows.map(toDelivery);
    });
  }

  /** A case's event deliveries that no attempt has touched yet: those whose workflow may not have started. */
  async unstartedEventDeliveries(caseId: string): Promise<CallbackDelivery[]> {
    const rows = await this.db
      .selectFrom('callback_deliveries')
      .selectAll()
      .where('case_id', '=', caseId)
      .where('subscription_id', 'is not', null)
      .where('status', '=', 'pending')
      .where('attempts', '=', 0)
      .execute();
    return rows.map(toDelivery);
  }

  /**
   * Pending deliveries whose next attempt was due before `dueBefore`, oldest due first, one page after `after`
   * (row values: one range of the status index in SQLite and Postgres, never the whole table).
   */
  async overdueDeliveries(dueBefore: string, after: DueKeyset | undefined, limit: number): Promise<CallbackDelivery[]> {
    let query = this.db
      .selectFrom('callback_deliveries')
      .selectAll()
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<', dueBefore);
    if (after)
      query = query.where(
        sql<boolean>`(${sql.ref('next_attempt_at')}, ${sql.ref('id')}) > (${after.dueAt}, ${after.id})`,
      );
    const rows = await query.orderBy('next_attempt_at').orderBy('id').limit(limit).execute();
    return rows.map(toDelivery);
  }

  /** Attempts of the given deliveries, keyed by delivery id, in attempt order. */
  async listAttempts(deliveryIds: string[]): Promise<Map<string, CallbackAttempt[]>> {
    const byDelivery = new Map<string, CallbackAttempt[]>(deliveryIds.map((id) => [id, []]));
    if (deliveryIds.length === 0) return byDelivery;
    const rows = await this.db
      .selectFrom('callback_attempts')
      .selectAll()
      .where('delivery_id', 'in', deliveryIds)
      .orderBy('delivery_id')
      .orderBy('attempt')
      .execute();
    for (const r of rows) {
      byDelivery.get(r.delivery_id)?.push({
        attempt: r.attempt,
        startedAt: r.started_at,
        durationMs: r.duration_ms,
        responseStatus: r.response_status,
        responseBody: r.response_body,
        error: r.error,
      });
    }
    return byDelivery;
  }

  /**
   * Records one attempt and the delivery's resulting state together. The
   * attempt row is upserted so an activity retried after a crash that came
   * after the insert does not fail on its own earlier write. On Postgres both
   * writes are one statement (a data-modifying WITH), one round trip instead
   * of four; SQLite has no such WITH and runs them in one transaction.
   */
  async recordAttempt(record: AttemptRecord): Promise<void> {
    const values: AttemptValues = { ...record, updatedAt: now() };
    if (this.db.getExecutor().adapter instanceof PostgresAdapter) {
      await this.attemptStatements.both.run(this.db, values);
      return;
    }
    await this.db.transaction().execute(async (trx) => {
      await this.attemptStatements.attempt.run(trx, values);
      await this.attemptStatements.deliveryState.run(trx, values);
    });
  }

  /** Ends a delivery without a further attempt (its schedule ran out). */
  async finishDelivery(id: string, status: DeliveryStatus): Promise<void> {
    await this.db
      .updateTable('callback_deliveries')
      .set({ status, next_attempt_at: null, updated_at: now() })
      .where('id', '=', id)
      .execute();
  }

  /**
   * Fails a delivery still as it was read (pending, after `attempts`), saying why as one more attempt that sent
   * nothing, the way an attempt refused before its request shows it; false when it changed since (an attempt
   * recorded, another end). For a delivery nothing will deliver any more (see DeliverySweep).
   */
  async failPending(delivery: Pick<CallbackDelivery, 'id' | 'attempts'>, reason: string): Promise<boolean> {
    const at = now();
    const attempt = delivery.attempts + 1;
    return this.db.transaction().execute(async (trx) => {
      const ended = await trx
        .updateTable('callback_deliveries')
        .set({ status: 'failed', attempts: attempt, next_attempt_at: null, updated_at: at })
        .where('id', '=', delivery.id)
        .where('status', '=', 'pending')
        .where('attempts', '=', delivery.attempts)
        .executeTakeFirst();
      if (ended.numUpdatedRows === 0n) return false;
      await insertAttempt(trx, {
        deliveryId: delivery.id,
        attempt,
        startedAt: at,
        durationMs: 0,
        responseStatus: null,
        responseBody: null,
        error: reason,
        status: 'failed',
        nextAttemptAt: null,
        updatedAt: at,
      }).execute();
      return true;
    });
  }

  async findWebhookSecret(workspaceId: string): Promise<WebhookSecretRow | undefined> {
    const r = await this.db
      .selectFrom('webhook_secrets')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirst();
    return r && toWebhookSecret(r);
  }

  /** Every workspace's secret row, a page at a time (for re-encryption under a new master key). */
  async webhookSecretPage(afterWorkspaceId: string, limit: number): Promise<WebhookSecretRow[]> {
    const rows = await this.db
      .selectFrom('webhook_secrets')
      .selectAll()
      .where('workspace_id', '>', afterWorkspaceId)
      .orderBy('workspace_id')
      .limit(limit)
      .execute();
    return rows.map(toWebhookSecret);
  }

  /** Swaps both ciphertexts if they are still the ones read (a rotation in between wins); false otherwise. */
  async replaceWebhookCiphertexts(
    row: WebhookSecretRow,
    secretCiphertext: string,
    previousSecretCiphertext: string | null,
  ): Promise<boolean> {
    const result = await this.db
      .updateTable('webhook_secrets')
      .set({ secret_ciphertext: secretCiphertext, previous_secret_ciphertext: previousSecretCiphertext })
      .where('workspace_id', '=', row.workspaceId)
      .where('secret_ciphertext', '=', row.secretCiphertext)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /** Stores a first secret unless one exists (two first uses racing keep the one that won). */
  async insertWebhookSecret(workspaceId: string, secretCiphertext: string): Promise<void> {
    await this.db
      .insertInto('webhook_secrets')
      .values({
        workspace_id: workspaceId,
        secret_ciphertext: secretCiphertext,
        previous_secret_ciphertext: null,
        previous_expires_at: null,
        created_at: now(),
        rotated_at: null,
      })
      .onConflict((oc) => oc.column('workspace_id').doNothing())
      .execute();
  }

  /**
   * Replaces the secret only if it is still `expectedCiphertext` (so two
   * rotations racing cannot both keep "their" previous secret); the old one
   * stays valid for signing until `previousExpiresAt`.
   */
  async rotateWebhookSecret(
    workspaceId: string,
    expectedCiphertext: string,
    secretCiphertext: string,
    previousExpiresAt: string,
  ): Promise<boolean> {
    const at = now();
    const result = await this.db
      .updateTable('webhook_secrets')
      .set({
        secret_ciphertext: secretCiphertext,
        previous_secret_ciphertext: expectedCiphertext,
        previous_expires_at: previousExpiresAt,
        created_at: at,
        rotated_at: at,
      })
      .where('workspace_id', '=', workspaceId)
      .where('secret_ciphertext', '=', expectedCiphertext)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }
}
