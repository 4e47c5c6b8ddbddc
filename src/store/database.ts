import path from 'node:path';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import SQLite from 'better-sqlite3';
import type Pg from 'pg';
import { Kysely, Migrator, PostgresAdapter, PostgresDialect, sql, type SqliteDatabase } from 'kysely';
import type { Database } from './schema.js';
import { concurrentIndexes, migrations } from './migrations/index.js';
import { buildConcurrentIndexes, type OnWaitingForBuild } from './migrations/concurrent-index.js';
import { isStoreUnavailable } from './unavailable.js';
import { MigrationLockBusyError, StoreSqliteDialect } from './sqlite-dialect.js';
import { waitingForAnother } from './waiting-for-another.js';

export type Db = Kysely<Database>;
export type DialectName = 'sqlite' | 'postgres';

export interface Store {
  db: Db;
  dialect: DialectName;
  /** Where it lives, without credentials, for logs. */
  location: string;
  /** One round trip (readiness). */
  ping(): Promise<void>;
  /** Whether an error means the database is unreachable or busy (503), not that the request was wrong. */
  isUnavailable: (err: unknown) => boolean;
  close(): Promise<void>;
}

/**
 * Opens the store: Postgres when the URL says postgres://, otherwise SQLite
 * on disk (WAL, so readers never wait for the writer). `sqlite://relative`
 * resolves against the data directory.
 */
export function openStore(dataDir: string, databaseUrl?: string, onPoolError?: (err: Error) => void): Store {
  if (databaseUrl && /^postgres(ql)?:\/\//.test(databaseUrl)) {
    // Loaded only for a Postgres store: a SQLite deployment never holds the driver (~3 MB of RSS).
    const pg = createRequire(import.meta.url)('pg') as typeof Pg;
    // A request waits at most 5 s for a connection while the database is away, then gets a 503.
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 10, connectionTimeoutMillis: 5000 });
    // An idle client whose server went away reports here; unhandled, it would end the process. The pool
    // drops that client and connects anew on the next query.
    pool.on('error', (err) => onPoolError?.(err));
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    const url = new URL(databaseUrl);
    return {
      db,
      dialect: 'postgres',
      location: `postgres://${url.host}${url.pathname}`,
      ping: () => pingStore(db),
      isUnavailable: isStoreUnavailable,
      close: () => db.destroy(),
    };
  }
  const file = databaseUrl
    ? path.resolve(dataDir, databaseUrl.replace(/^sqlite:\/\//, ''))
    : path.join(dataDir, 'caseflow.db');
  mkdirSync(path.dirname(file), { recursive: true });
  const database = new SQLite(file);
  // First: the pragmas after it wait for another process's write as any statement does.
  database.pragma('busy_timeout = 5000');
  // Takes effect in a new file (before its first table); an existing one switches at the first retention run. Set
  // only when not yet so: setting it takes the write lock, and a start would wait behind (and fail after busy_timeout
  // on) another process's migrations before its own migrations could wait for them.
  if (database.pragma('auto_vacuum', { simple: true }) !== INCREMENTAL_AUTO_VACUUM) {
    database.pragma('auto_vacuum = INCREMENTAL');
  }
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');
  const db = new Kysely<Database>({ dialect: new StoreSqliteDialect({ database: withStatementCache(database) }) });
  return {
    db,
    dialect: 'sqlite',
    location: file,
    ping: () => pingStore(db),
    isUnavailable: isStoreUnavailable,
    close: () => db.destroy(),
  };
}

/** `pragma auto_vacuum`'s answer for INCREMENTAL. */
const INCREMENTAL_AUTO_VACUUM = 2;

/** Statements kept prepared; a bound keeps SQL with varying IN-lists from growing it forever. */
const statementCacheSize = 500;

/**
 * kysely prepares every query anew; on the hot path (authentication, case
 * writes) preparing costs as much as running. Reusing the prepared statement
 * for the same SQL text is safe in better-sqlite3, except while a statement
 * is still being iterated, when a fresh one is prepared instead.
 */
function withStatementCache(database: SQLite.Database): SqliteDatabase {
  const cache = new Map<string, SQLite.Statement>();
  return {
    close: () => database.close(),
    prepare(sqlText: string) {
      const cached = cache.get(sqlText);
      if (cached && !cached.busy) return cached;
      const statement = database.prepare(sqlText);
      if (!cached) {
        if (cache.size >= statementCacheSize) cache.delete(cache.keys().next().value as string);
        cache.set(sqlText, statement);
      }
      return statement;
    },
  };
}

/** Told while a start waits for another process, at once and then every 30 s: an operator sees why it takes long. */
export interface MigrationWaits {
  /** Another process holds the SQLite file's write lock (its migrations) past busy_timeout. */
  onWaitingForMigrations?: () => void;
  onWaitingForBuild?: OnWaitingForBuild;
}

/** How long after one attempt on SQLite, the write lock busy, the next comes (each itself waits busy_timeout). */
const MIGRATIONS_RETRY_MS = 250;
/**
 * How long a start waits for another process's migrations on SQLite before it gives up: within the room the
 * documented startup probe leaves an upgrade (docs/running.md, 20 minutes).
 */
const MIGRATIONS_WAIT_LIMIT_MS = 10 * 60_000;

export async function migrateToLatest(db: Db, waits: MigrationWaits = {}): Promise<string[]> {
  // kysely looks for its own tables in any schema unless told which: with two
  // databases in one Postgres (one schema each) it would find the other's.
  const migrationTableSchema =
    db.getExecutor().adapter instanceof PostgresAdapter
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema
      : undefined;
  const migrator = new Migrator({
    db,
    provider: { getMigrations: () => Promise.resolve(migrations) },
    migrationTableSchema,
    // Areas own number ranges (e.g. 045-049 after 050 shipped): a store that already ran a later
    // number must still apply an earlier one added since, so order is by name but not enforced.
    allowUnorderedMigrations: true,
  });
  // On SQLite busy_timeout (5 s, the event loop blocked meanwhile) is all one attempt waits for another process's
  // migrations: a longer wait is more attempts, not a longer busy_timeout. On Postgres kysely's lock waits itself.
  const results = await waitingForAnother(
    async () => {
      const { error, results } = await migrator.migrateToLatest();
      if (error instanceof MigrationLockBusyError) return undefined;
      if (error) throw error instanceof Error ? error : new Error('Migration failed', { cause: error });
      return results ?? [];
    },
    {
      pollMs: MIGRATIONS_RETRY_MS,
      onWaiting: () => waits.onWaitingForMigrations?.(),
      limit: {
        ms: MIGRATIONS_WAIT_LIMIT_MS,
        gaveUp: () =>
          new Error(
            `gave up after ${MIGRATIONS_WAIT_LIMIT_MS / 60_000} minutes waiting for another process's migrations ` +
              "(it holds the store's write lock); nothing was applied: the next start tries again",
          ),
      },
    },
  );
  const applied = results.filter((r) => r.status === 'Success').map((r) => r.migrationName);
  const built = await buildConcurrentIndexes(db, concurrentIndexes, waits.onWaitingForBuild);
  return [...applied, ...built.map((name) => `index ${name} (built concurrently)`)];
}

export async function pingStore(db: Db): Promise<void> {
  await sql`select 1`.execute(db);
}
