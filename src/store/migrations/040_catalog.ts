import { type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('providers')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(36)', (c) => c.references('organizations.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_by', 'varchar(36)')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('providers_org').on('providers').column('organization_id').execute();

  await db.schema
    .createTable('integrations')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(36)', (c) => c.references('organizations.id'))
    .addColumn('provider_id', 'varchar(36)', (c) => c.notNull().references('providers.id'))
    .addColumn('latest_version_number', 'integer', (c) => c.notNull())
    .addColumn('created_by', 'varchar(36)')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('integrations_org').on('integrations').column('organization_id').execute();
  await db.schema
    .createTable('integration_versions')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('integration_id', 'varchar(36)', (c) => c.notNull().references('integrations.id'))
    .addColumn('version_number', 'integer', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('icon', 'text', (c) => c.notNull())
    .addColumn('category', 'text', (c) => c.notNull())
    .addColumn('required_plan', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('is_new', 'integer', (c) => c.notNull())
    .addColumn('is_popular', 'integer', (c) => c.notNull())
    .addColumn('is_beta', 'integer', (c) => c.notNull())
    .addColumn('created_by', 'varchar(36)')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('integration_versions_number', ['integration_id', 'version_number'])
    .execute();

  await db.schema
    .createTable('integration_actions')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('integration_id', 'varchar(36)', (c) => c.notNull().references('integrations.id'))
    .addColumn('latest_version_number', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('integration_actions_integration')
    .on('integration_actions')
    .column('integration_id')
    .execute();
  await db.schema
    .createTable('integration_action_versions')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('action_id', 'varchar(36)', (c) => c.notNull().references('integration_actions.id'))
    .addColumn('version_number', 'integer', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('endpoint', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('inputs', 'text', (c) => c.notNull())
    .addColumn('outputs', 'text', (c) => c.notNull())
    .addColumn('code', 'text')
    .addColumn('created_by', 'varchar(36)')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('integration_action_versions_number', ['action_id', 'version_number'])
    .execute();

  await db.schema
    .createTable('credential_templates')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('integration_id', 'varchar(36)', (c) => c.notNull().references('integrations.id'))
    .addColumn('auth_type', 'text', (c) => c.notNull())
    .addColumn('latest_version_number', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('credential_templates_auth_type', ['integration_id', 'auth_type'])
    .execute();
  await db.schema
    .createTable('credential_template_versions')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('credential_id', 'varchar(36)', (c) => c.notNull().references('credential_templates.id'))
    .addColumn('version_number', 'integer', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('icon', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('inputs', 'text', (c) => c.notNull())
    .addColumn('created_by', 'varchar(36)')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('credential_template_versions_number', ['credential_id', 'version_number'])
    .execute();

  await db.schema
    .createTable('integration_idempotency')
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull().references('organizations.id'))
    .addColumn('key_hash', 'varchar(64)', (c) => c.notNull())
    .addColumn('request_hash', 'varchar(64)', (c) => c.notNull())
    .addColumn('result', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('integration_idempotency_pk', ['organization_id', 'key_hash'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'integration_idempotency',
    'credential_template_versions',
    'credential_templates',
    'integration_action_versions',
    'integration_actions',
    'integration_versions',
    'integrations',
    'providers',
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
