import { type Kysely } from 'kysely';

/** Which clock a node record's times come from (NodeClock in src/domain/cases.ts); null on older records. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('case_nodes').addColumn('clock', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('case_nodes').dropColumn('clock').execute();
}
