import { type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('callback_deliveries')
    // Not only UUIDs: the case run derives its delivery id from the case id and status.
    .addColumn('id', 'varchar(128)', (c) => c.primaryKey())
    .addColumn('case_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull().references('workspaces.id'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text')
    .addColumn('workflow_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('callback_deliveries_case')
    .on('callback_deliveries')
    .columns(['case_id', 'created_at'])
    .execute();
  await db.schema
    .createTable('callback_attempts')
    .addColumn('delivery_id', 'varchar(128)', (c) =>
      c.notNull().references('callback_deliveries.id').onDelete('cascade'),
    )
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('started_at', 'text', (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('response_status', 'integer')
    .addColumn('response_body', 'text')
    .addColumn('error', 'text')
    .addPrimaryKeyConstraint('callback_attempts_pk', ['delivery_id', 'attempt'])
    .execute();
  await db.schema
    .createTable('webhook_secrets')
    .addColumn('workspace_id', 'varchar(36)', (c) => c.primaryKey().references('workspaces.id'))
    .addColumn('secret_ciphertext', 'text', (c) => c.notNull())
    .addColumn('previous_secret_ciphertext', 'text')
    .addColumn('previous_expires_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('rotated_at', 'text')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['webhook_secrets', 'callback_attempts', 'callback_deliveries']) {
    await db.schema.dropTable(table).execute();
  }
}
