import { type Kysely } from 'kysely';

/**
 * Concurrency caps: an organization's own cap (without a row the configured default applies), one
 * lock row per organization that admissions take first, a workflow's own cap, and when a case
 * joined its queue.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('concurrency_limits')
    .addColumn('organization_id', 'varchar(36)', (c) => c.primaryKey().references('organizations.id'))
    .addColumn('max_concurrent_cases', 'integer')
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('admission_locks')
    .addColumn('organization_id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('locked_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.alterTable('workflows').addColumn('max_concurrent_cases', 'integer').execute();
  await db.schema.alterTable('cases').addColumn('queued_at', 'text').execute();
  // An organization's queue in order, and the slots a workflow holds.
  await db.schema
    .createIndex('cases_org_status_queued')
    .on('cases')
    .columns(['organization_id', 'status', 'queued_at', 'id'])
    .execute();
  await db.schema.createIndex('cases_workflow_status').on('cases').columns(['workflow_id', 'status']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('cases_workflow_status').execute();
  await db.schema.dropIndex('cases_org_status_queued').execute();
  await db.schema.alterTable('cases').dropColumn('queued_at').execute();
  await db.schema.alterTable('workflows').dropColumn('max_concurrent_cases').execute();
  await db.schema.dropTable('admission_locks').execute();
  await db.schema.dropTable('concurrency_limits').execute();
}
