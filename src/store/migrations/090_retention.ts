import { type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('retention_policies')
    .addColumn('organization_id', 'varchar(36)', (c) => c.primaryKey().references('organizations.id'))
    .addColumn('keep_days', 'integer')
    .addColumn('keep_failed_days', 'integer')
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  // The purge's "ended before the cutoff", a batch at a time per organization.
  await db.schema.createIndex('cases_org_finished').on('cases').columns(['organization_id', 'finished_at']).execute();
  // A file a node wrote belongs to its case alone, and goes with it.
  await db.schema.alterTable('files').addColumn('case_id', 'varchar(36)').execute();
  await db.schema.createIndex('files_case').on('files').column('case_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('files_case').execute();
  await db.schema.alterTable('files').dropColumn('case_id').execute();
  await db.schema.dropIndex('cases_org_finished').execute();
  await db.schema.dropTable('retention_policies').execute();
}
