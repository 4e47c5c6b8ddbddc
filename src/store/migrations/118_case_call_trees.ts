import { sql, type Kysely } from 'kysely';
import { concurrentIndexMigration, type ConcurrentIndex } from './concurrent-index.js';

/** Sub-workflow cases filled per transaction (Postgres): each batch holds its rows' locks for milliseconds. */
const FILL_BATCH = 500;
/** Levels walked up from a case to its top-level case (cases.maxCallDepth is at most 50). */
const MAX_LEVELS = 50;

/**
 * The top-level case of each sub-workflow case written before the column: its parents walked up, one batch of cases
 * at a time in the order of the parents index (a keyset, so a batch reads about as many rows as it fills). Cases
 * already filled are not written again: a fill cut short reads past them at its next run and fills the rest.
 */
async function fillCaseRoots<DB>(db: Kysely<DB>): Promise<void> {
  let after = { parent: '', id: '' };
  for (;;) {
    const { rows } = await sql<{ parent: string; id: string }>`
      select parent_case_id as parent, id from cases
      where parent_case_id >= ${after.parent} and (parent_case_id > ${after.parent} or id > ${after.id})
      order by parent_case_id, id limit ${FILL_BATCH}`.execute(db);
    const last = rows.at(-1);
    if (!last) return;
    const ids = sql.join(rows.map((row) => row.id));
    await sql`
      with recursive up (id, ancestor, level) as (
        select id, parent_case_id, 1 from cases where id in (${ids}) and root_case_id is null
        union all
        select up.id, p.parent_case_id, up.level + 1 from up join cases p on p.id = up.ancestor
        where p.parent_case_id is not null and up.level < ${MAX_LEVELS}
      ),
      roots (id, root) as (
        select up.id, up.ancestor from up
        join (select id, max(level) as top from up group by id) deepest on deepest.id = up.id and deepest.top = up.level
      )
      update cases set root_case_id = roots.root from roots
      where cases.id = roots.id and cases.root_case_id is null`.execute(db);
    after = last;
  }
}

/**
 * The top-level case of a sub-workflow case (call_workflow), so the cases one top-level case started through
 * its calls, at any depth, are counted in one indexed read (cases.maxCallCases). Sub-workflow cases written before
 * the column are filled before its index is built: in the migration on SQLite; on Postgres once the migrations have
 * committed, in short transactions, then the index built concurrently (concurrent-index.ts), so `cases` takes writes
 * throughout. A process serves only once its migrations and builds are done, so none reads a half-filled column.
 */
export const casesRoot: ConcurrentIndex = {
  name: 'cases_root',
  table: 'cases',
  columns: ['root_case_id'],
  fill: fillCaseRoots,
};

const index = concurrentIndexMigration(casesRoot);

export async function up(db: Kysely<unknown>): Promise<void> {
  // A nullable column without a default: a catalog change on Postgres, whatever the table holds.
  await db.schema.alterTable('cases').addColumn('root_case_id', 'varchar(36)').execute();
  await index.up(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await index.down(db);
  await db.schema.alterTable('cases').dropColumn('root_case_id').execute();
}
