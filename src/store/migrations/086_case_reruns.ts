import { type Kysely } from 'kysely';

/**
 * Reruns: a case's link to the case it reruns (and how), the original node a
 * rerun's node reused, and bulk rerun batches with one outcome per original.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('cases').addColumn('rerun_of', 'varchar(36)').execute();
  await db.schema.alterTable('cases').addColumn('rerun_from', 'text').execute();
  await db.schema.createIndex('cases_rerun_of').on('cases').column('rerun_of').execute();
  await db.schema.alterTable('case_nodes').addColumn('reused_from', 'text').execute();
  await db.schema
    .createTable('case_rerun_batches')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull().references('organizations.id'))
    .addColumn('workspace_ids', 'text')
    .addColumn('filter', 'text', (c) => c.notNull())
    .addColumn('rerun_from', 'text', (c) => c.notNull())
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('matched', 'integer', (c) => c.notNull())
    .addColumn('created_by_key_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('finished_at', 'text')
    .addColumn('error', 'text')
    .addColumn('temporal_workflow_id', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('case_rerun_batches_org_created')
    .on('case_rerun_batches')
    .columns(['organization_id', 'created_at'])
    .execute();
  await db.schema
    .createTable('case_rerun_items')
    .addColumn('batch_id', 'varchar(36)', (c) => c.notNull().references('case_rerun_batches.id'))
    .addColumn('case_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('rerun_case_id', 'varchar(36)')
    .addColumn('at', 'text', (c) => c.notNull())
    // One outcome per original in a batch: a retried or replayed step records nothing twice.
    .addPrimaryKeyConstraint('case_rerun_items_pk', ['batch_id', 'case_id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('case_rerun_items').execute();
  await db.schema.dropTable('case_rerun_batches').execute();
  await db.schema.alterTable('case_nodes').dropColumn('reused_from').execute();
  await db.schema.dropIndex('cases_rerun_of').execute();
  await db.schema.alterTable('cases').dropColumn('rerun_from').execute();
  await db.schema.alterTable('cases').dropColumn('rerun_of').execute();
}
