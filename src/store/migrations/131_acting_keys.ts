import { type Kysely } from 'kysely';

/**
 * The keys two standing grants act for, checked each time they are used (a revoked or expired key, or one whose
 * user left, stops them): the key that created a task's completion link, and the key that created an event
 * subscription or last pointed it at its URL. Null for rows written before (they act for no key).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('human_tasks').addColumn('link_key_id', 'varchar(36)').execute();
  await db.schema.alterTable('event_subscriptions').addColumn('created_by_key_id', 'varchar(36)').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('event_subscriptions').dropColumn('created_by_key_id').execute();
  await db.schema.alterTable('human_tasks').dropColumn('link_key_id').execute();
}
