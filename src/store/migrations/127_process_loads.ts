import { type Kysely } from 'kysely';

/**
 * The event-loop utilization each process that runs case work publishes about once a second, so the fair
 * share's saturation gate (src/cases/admission) sees the workers' load from an API process too. A row
 * not updated for a few intervals is a dead process's and is ignored.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('process_loads')
    .addColumn('process_id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('utilization', 'double precision', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('process_loads').execute();
}
