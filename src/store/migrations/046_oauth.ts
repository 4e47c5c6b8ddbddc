import { type Kysely } from 'kysely';

/**
 * OAuth connections: one row per authorization attempt (a connect, or a
 * re-authorization of the same connection), and the generation of the tokens
 * a credential holds (the tokens themselves are inside its ciphertext).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('oauth_attempts')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('connection_id', 'varchar(36)', (c) => c.notNull().references('connections.id'))
    .addColumn('credential_row_id', 'varchar(36)', (c) => c.notNull().references('connection_credentials.id'))
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull().references('organizations.id'))
    .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull().references('workspaces.id'))
    .addColumn('token_hash', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('state_hash', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('verifier_ciphertext', 'text', (c) => c.notNull())
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('claimed_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('finished_at', 'text')
    .execute();
  await db.schema.createIndex('oauth_attempts_connection').on('oauth_attempts').column('connection_id').execute();
  await db.schema
    .alterTable('connection_credentials')
    .addColumn('token_generation', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('connection_credentials').dropColumn('token_generation').execute();
  await db.schema.dropTable('oauth_attempts').execute();
}
