import { type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('generation_runs')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('workflow_id', 'varchar(36)', (c) => c.notNull().references('workflows.id'))
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('record', 'text', (c) => c.notNull())
    .addColumn('created_by', 'varchar(36)', (c) => c.notNull())
    .addColumn('started_at', 'text', (c) => c.notNull())
    .addColumn('finalized', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createIndex('generation_runs_workflow')
    .on('generation_runs')
    .columns(['workflow_id', 'started_at'])
    .execute();
  await db.schema
    .createTable('rate_limit_windows')
    .addColumn('bucket', 'varchar(255)', (c) => c.notNull())
    .addColumn('window_start', 'bigint', (c) => c.notNull())
    .addColumn('hits', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('rate_limit_windows_pk', ['bucket', 'window_start'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('rate_limit_windows').execute();
  await db.schema.dropTable('generation_runs').execute();
}
