import { type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('code_nodes')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull().references('organizations.id'))
    .addColumn('latest_version_number', 'integer', (c) => c.notNull())
    .addColumn('created_by', 'varchar(36)', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('code_nodes_org').on('code_nodes').column('organization_id').execute();
  await db.schema
    .createTable('code_node_versions')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('code_node_id', 'varchar(36)', (c) => c.notNull().references('code_nodes.id'))
    .addColumn('version_number', 'integer', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('icon', 'text')
    .addColumn('source_code', 'text', (c) => c.notNull())
    .addColumn('categories', 'text', (c) => c.notNull())
    .addColumn('inputs', 'text', (c) => c.notNull())
    .addColumn('outputs', 'text', (c) => c.notNull())
    .addColumn('tags', 'text', (c) => c.notNull())
    .addColumn('options', 'text', (c) => c.notNull())
    .addColumn('non_editable_fields', 'text', (c) => c.notNull())
    .addColumn('created_by', 'varchar(36)', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('code_node_versions_number', ['code_node_id', 'version_number'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('code_node_versions').execute();
  await db.schema.dropTable('code_nodes').execute();
}
