import { sql, type Kysely } from 'kysely';

/**
 * The top-level case of a sub-workflow case (call_workflow), so the cases one top-level case started through
 * its calls, at any depth, are counted in one indexed read (cases.maxCallCases).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('cases').addColumn('root_case_id', 'varchar(36)').execute();
  await db.schema.createIndex('cases_root').on('cases').column('root_case_id').execute();
  // Sub-workflow cases written before: their parent first, then one level up at a time (depth is at most 50).
  await sql`update cases set root_case_id = parent_case_id where parent_case_id is not null`.execute(db);
  for (let level = 0; level < 50; level += 1) {
    const moved = await sql`
      update cases set root_case_id = (select p.parent_case_id from cases p where p.id = cases.root_case_id)
      where root_case_id in (select id from cases where parent_case_id is not null)`.execute(db);
    if (!moved.numAffectedRows) break;
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('cases_root').execute();
  await db.schema.alterTable('cases').dropColumn('root_case_id').execute();
}
