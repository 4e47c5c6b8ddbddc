import { type Kysely } from 'kysely';

/**
 * Pending deliveries by when their next attempt is due: the delivery sweep (src/callbacks/delivery-sweep.ts) asks
 * every minute for those overdue, oldest first. Without it that reads every delivery ever made.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('callback_deliveries_status_due')
    .on('callback_deliveries')
    .columns(['status', 'next_attempt_at', 'id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('callback_deliveries_status_due').execute();
}
