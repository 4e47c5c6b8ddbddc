import { type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('workflows')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('entity_id', 'varchar(36)', (c) => c.notNull().unique())
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull().references('organizations.id'))
    .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull().references('workspaces.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('builder_type', 'text', (c) => c.notNull())
    .addColumn('created_by', 'varchar(36)', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('org_unit_ids', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('workflows_org').on('workflows').column('organization_id').execute();
  await db.schema.createIndex('workflows_workspace').on('workflows').column('workspace_id').execute();
  await db.schema
    .createTable('workflow_versions')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('workflow_id', 'varchar(36)', (c) => c.notNull().references('workflows.id'))
    .addColumn('version_number', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('graph', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('created_by', 'varchar(36)', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('workflow_versions_number', ['workflow_id', 'version_number'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('workflow_versions').execute();
  await db.schema.dropTable('workflows').execute();
}
