import { type Kysely } from 'kysely';

/**
 * rate_limit_windows (created with generation, 060) becomes every limit's
 * counter table: windows of different lengths share it, so each row says
 * when it expires and pruning goes by that. Rows from before have 0 and are
 * pruned at once: they are counts of windows at most one window long.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('rate_limit_windows')
    .addColumn('expires_at', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('rate_limit_windows_expiry').on('rate_limit_windows').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('rate_limit_windows_expiry').execute();
  await db.schema.alterTable('rate_limit_windows').dropColumn('expires_at').execute();
}
