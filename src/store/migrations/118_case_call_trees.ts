import { sql, type Kysely } from 'kysely';
import { concurrentIndexMigration, type ConcurrentIndex } from './concurrent-index.js';

/** Sub-workflow cases filled per transaction (Postgres): each batch holds its rows' locks for milliseconds. */
const FILL_BATCH = 500;
/** Levels walked up from a case to its top-level case (cases.maxCallDepth is at most 50). */
const MAX_LEVELS = 50;
/**
 * Postgres errors a batch is tried again after: a deadlock with a process still writing cases (its rows are locked
 * in no fixed order), a lock wait past the role's lock_timeout. Anything else, or a sixth time, stops the start;
 * the next start goes on from where the fill was.
 */
const RETRIED_CODES = new Set(['40P01', '55P03']);
const BATCH_TRIES = 5;

function retried(err: unknown): err is Error {
  return err instanceof Error && 'code' in err && RETRIED_CODES.has(String(err.code));
}

/** The top-level case of each of `ids` whose root is still empty: its parents walked up. */
async function fillBatch<DB>(db: Kysely<DB>, ids: string[]): Promise<void> {
  for (let tries = 1; ; tries += 1) {
    try {
      await sql`
        with recursive up (id, ancestor, level) as (
          select id, parent_case_id, 1 from cases where id in (${sql.join(ids)}) and root_case_id is null
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
      return;
    } catch (err) {
      if (!retried(err)) throw err;
      // The start stops on this error: it says what stopped and that it is not lost work.
      if (tries >= BATCH_TRIES)
        throw new Error(
          `filling cases.root_case_id: gave up on a batch after ${tries} tries, each stopped by a lock held elsewhere ` +
            `(the last: ${err.message}); the next start goes on from where the fill stopped`,
          { cause: err },
        );
      await new Promise((resolve) => setTimeout(resolve, 100 * tries));
    }
  }
}

/**
 * The top-level case of each sub-workflow case written before the column, one batch of cases at a time in the
 * order of the primary key (a keyset: the whole table is read once, however many children one case has). Cases
 * already filled are not written again: a fill cut short reads past them at its next run and fills the rest.
 */
async function fillCaseRoots<DB>(db: Kysely<DB>): Promise<void> {
  let after = '';
  for (;;) {
    const { rows } = await sql<{ id: string }>`
      select id from cases where parent_case_id is not null and id > ${after} order by id limit ${FILL_BATCH}`.execute(
      db,
    );
    const last = rows.at(-1);
    if (!last) return;
    await fillBatch(
      db,
      rows.map((row) => row.id),
    );
    after = last.id;
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
