import { type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('discovery_processes')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull().references('organizations.id'))
    .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull().references('workspaces.id'))
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('revision', 'integer', (c) => c.notNull())
    .addColumn('snapshot_count', 'integer', (c) => c.notNull())
    .addColumn('created_by', 'varchar(36)', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('discovery_processes_workspace')
    .on('discovery_processes')
    .column('workspace_id')
    .execute();
  await db.schema
    .createTable('discovery_process_versions')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('process_id', 'varchar(36)', (c) => c.notNull().references('discovery_processes.id'))
    .addColumn('version_number', 'integer', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('process_updated_at', 'text', (c) => c.notNull())
    .addColumn('created_by', 'varchar(36)', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('discovery_process_versions_number', ['process_id', 'version_number'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('discovery_process_versions').execute();
  await db.schema.dropTable('discovery_processes').execute();
}
