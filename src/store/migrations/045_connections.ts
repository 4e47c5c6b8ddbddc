import { type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('connection_credentials')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull().references('organizations.id'))
    .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull().references('workspaces.id'))
    .addColumn('integration_id', 'varchar(36)', (c) => c.notNull().references('integrations.id'))
    .addColumn('credential_id', 'varchar(36)', (c) => c.notNull().references('credential_templates.id'))
    .addColumn('credential_version_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('auth_type', 'text', (c) => c.notNull())
    .addColumn('data_ciphertext', 'text', (c) => c.notNull())
    .addColumn('created_by', 'varchar(36)', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('connection_credentials_workspace')
    .on('connection_credentials')
    .columns(['workspace_id', 'organization_id'])
    .execute();

  await db.schema
    .createTable('connections')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull().references('organizations.id'))
    .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull().references('workspaces.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('integration_id', 'varchar(36)', (c) => c.notNull().references('integrations.id'))
    .addColumn('integration_version_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('action_version_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('credential_row_id', 'varchar(36)', (c) => c.notNull().references('connection_credentials.id'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('test_action_version_id', 'varchar(36)')
    .addColumn('test_passed', 'integer')
    .addColumn('test_error', 'text')
    .addColumn('created_by', 'varchar(36)', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('revoked_at', 'text')
    .execute();
  await db.schema
    .createIndex('connections_workspace')
    .on('connections')
    .columns(['workspace_id', 'created_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('connections').execute();
  await db.schema.dropTable('connection_credentials').execute();
}
