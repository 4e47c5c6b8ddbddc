import { type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('event_subscriptions')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull().references('organizations.id'))
    .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull().references('workspaces.id'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('event_types', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('secret_ciphertext', 'text', (c) => c.notNull())
    .addColumn('previous_secret_ciphertext', 'text')
    .addColumn('previous_expires_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  // The list (newest first, keyset pages) and the case end's "who subscribes in this workspace".
  await db.schema
    .createIndex('event_subscriptions_org_created')
    .on('event_subscriptions')
    .columns(['organization_id', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('event_subscriptions_workspace')
    .on('event_subscriptions')
    .columns(['workspace_id', 'enabled'])
    .execute();
  // A subscription's deliveries are callback deliveries that name it; null for a case's own callbackUrl.
  await db.schema.alterTable('callback_deliveries').addColumn('subscription_id', 'varchar(36)').execute();
  await db.schema
    .createIndex('callback_deliveries_subscription')
    .on('callback_deliveries')
    .columns(['subscription_id', 'created_at', 'id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('callback_deliveries_subscription').execute();
  await db.schema.alterTable('callback_deliveries').dropColumn('subscription_id').execute();
  await db.schema.dropTable('event_subscriptions').execute();
}
