import { PostgresAdapter, sql, type Kysely, type Migration } from 'kysely';
import { waitingForAnother } from '../waiting-for-another.js';
import type { BuildWait } from '../../domain/index-build-waits.js';

/** An index added to a table that may be large (and written to) by the time its migration runs. */
export interface ConcurrentIndex {
  name: string;
  table: string;
  columns: readonly string[];
  /**
   * Rows written before its migration whose indexed column it fills, first: in the migration on SQLite; on Postgres
   * before the build, in short transactions of its own. It skips rows already filled, so one cut short resumes.
   */
  fill?: <DB>(db: Kysely<DB>) => Promise<void>;
}

/** Advisory-lock class of the index builds (the key within it is the schema and the index name). */
const BUILD_LOCK_CLASS = 0x63660125;
/** How often a process waits for another's build of the same index to finish. */
const BUILD_LOCK_POLL_MS = 250;

/** Told while this process waits in building `index`. */
export type OnWaitingForBuild = (index: string, on: BuildWait) => void;

/** How long a build goes before it is told, and told again, that it may wait for transactions open on the table. */
const BUILD_SAID_EVERY_MS = 30_000;

const onPostgres = <DB>(db: Kysely<DB>) => db.getExecutor().adapter instanceof PostgresAdapter;

/**
 * The migration of such an index. On SQLite it is built in the migration (one writer at a time: nothing to gain).
 * On Postgres a plain CREATE INDEX holds every write to the table for the whole build, and CREATE INDEX
 * CONCURRENTLY cannot run inside a transaction, where kysely's migrator runs all pending migrations (one
 * transaction, under its advisory lock): there the migration records it, and buildConcurrentIndexes fills and builds
 * it once the migrations have committed.
 */
export function concurrentIndexMigration(index: ConcurrentIndex): Required<Migration> {
  return {
    async up(db) {
      if (onPostgres(db)) return;
      await index.fill?.(db);
      await db.schema
        .createIndex(index.name)
        .on(index.table)
        .columns([...index.columns])
        .execute();
    },
    async down(db) {
      await db.schema.dropIndex(index.name).ifExists().execute();
    },
  };
}

/**
 * Fills and builds on Postgres the indexes that are missing or left invalid, CONCURRENTLY: writes to the table go on
 * while it builds. Runs after the migrations on a connection of its own, outside any transaction. One process builds a
 * given index at a time (a session advisory lock, polled: a session waiting inside a statement holds a snapshot,
 * which the build would wait for in turn). The names built.
 */
export async function buildConcurrentIndexes<DB>(
  db: Kysely<DB>,
  indexes: readonly ConcurrentIndex[],
  onWaiting: OnWaitingForBuild = () => undefined,
): Promise<string[]> {
  if (!onPostgres(db)) return [];
  return db.connection().execute(async (connection) => {
    const built: string[] = [];
    for (const index of indexes) if (await buildOne(connection, index, onWaiting)) built.push(index.name);
    return built;
  });
}

async function buildOne<DB>(db: Kysely<DB>, index: ConcurrentIndex, onWaiting: OnWaitingForBuild): Promise<boolean> {
  const key = sql`${sql.lit(BUILD_LOCK_CLASS)}, hashtext(current_schema() || '.' || ${index.name})`;
  // The start waits here, for as long as another process builds: an operator is told why.
  await waitingForAnother(
    async () => {
      const { rows } = await sql<{ locked: boolean }>`select pg_try_advisory_lock(${key}) as locked`.execute(db);
      return rows[0]?.locked ? true : undefined;
    },
    { pollMs: BUILD_LOCK_POLL_MS, onWaiting: () => onWaiting(index.name, 'another build') },
  );
  try {
    // In the store's own schema: unqualified, a same-named index in another schema on the search_path would answer.
    const { rows } = await sql<{ valid: boolean }>`
      select indisvalid as valid from pg_index
      where indexrelid = to_regclass(format('%I.%I', current_schema(), ${index.name}::text))`.execute(db);
    const existing = rows[0];
    if (existing?.valid) return false;
    // A build that failed or was interrupted leaves an invalid index: kept up by every write, used by no query.
    if (existing) await sql`drop index concurrently ${sql.id(index.name)}`.execute(db);
    // Until the index is valid its fill may be unfinished: each start runs it again, and it goes on from where it was.
    await index.fill?.(db);
    const columns = sql.join(index.columns.map((column) => sql.id(column)));
    // A role's statement_timeout would cut every build on a large table short, and each start would try again; its
    // lock_timeout every build that waits (as it must) for a transaction open on the table longer than that.
    await sql`set statement_timeout = 0`.execute(db);
    await sql`set lock_timeout = 0`.execute(db);
    const saying = setInterval(() => onWaiting(index.name, 'open transactions'), BUILD_SAID_EVERY_MS);
    try {
      await sql`create index concurrently ${sql.id(index.name)} on ${sql.id(index.table)} (${columns})`.execute(db);
    } finally {
      clearInterval(saying);
    }
    return true;
  } finally {
    await sql`reset statement_timeout`.execute(db);
    await sql`reset lock_timeout`.execute(db);
    await sql`select pg_advisory_unlock(${key})`.execute(db);
  }
}
