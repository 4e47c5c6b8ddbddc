import { type Kysely } from 'kysely';

/**
 * Cases by when their run started: the fair share (src/cases/admission) asks on each execute which
 * organizations started a case within the last seconds. Without it that reads the whole table.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('cases_started').on('cases').column('started_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('cases_started').execute();
}
