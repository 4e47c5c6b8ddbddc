import { type Kysely } from 'kysely';

/** The retention purge's "generation runs started before the cutoff", a batch at a time per organization. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('generation_runs_org_started')
    .on('generation_runs')
    .columns(['organization_id', 'started_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('generation_runs_org_started').execute();
}
