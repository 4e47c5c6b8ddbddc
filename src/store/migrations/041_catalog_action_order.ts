import { type Kysely } from 'kysely';

/**
 * An action's place in its integration (0-based, in the order authored):
 * actions created in one request share a timestamp, so the time alone cannot
 * keep their order. Rows from before keep 0 and fall back to time, then name.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('integration_actions')
    .addColumn('position', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('integration_actions').dropColumn('position').execute();
}
