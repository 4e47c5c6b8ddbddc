import { type Kysely } from 'kysely';

/**
 * Inbound webhook triggers (hooks), the Idempotency-Key records of case starts
 * and hook deliveries, and the hook a case was started by.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('hooks')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull().references('organizations.id'))
    .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull().references('workspaces.id'))
    .addColumn('workflow_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('scheme', 'text', (c) => c.notNull())
    .addColumn('signature_header', 'text')
    .addColumn('mapping', 'text')
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('sync_timeout_ms', 'integer', (c) => c.notNull())
    .addColumn('tolerance_seconds', 'integer', (c) => c.notNull())
    .addColumn('rate_limit_per_minute', 'integer', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('secret_ciphertext', 'text', (c) => c.notNull())
    .addColumn('previous_secret_ciphertext', 'text')
    .addColumn('previous_secret_expires_at', 'text')
    .addColumn('created_by_key_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('created_by_user_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('hooks_workflow').on('hooks').columns(['workflow_id', 'created_at']).execute();
  await db.schema
    .createTable('idempotency_keys')
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('scope', 'varchar(64)', (c) => c.notNull())
    .addColumn('key_hash', 'varchar(64)', (c) => c.notNull())
    .addColumn('request_hash', 'varchar(64)', (c) => c.notNull())
    .addColumn('claim_token', 'varchar(36)', (c) => c.notNull())
    .addColumn('response_status', 'integer')
    .addColumn('response_body', 'text')
    .addColumn('lease_until', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['organization_id', 'scope', 'key_hash'])
    .execute();
  await db.schema.createIndex('idempotency_keys_created').on('idempotency_keys').column('created_at').execute();
  await db.schema.alterTable('cases').addColumn('hook_id', 'varchar(36)').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('cases').dropColumn('hook_id').execute();
  await db.schema.dropTable('idempotency_keys').execute();
  await db.schema.dropTable('hooks').execute();
}
