import path from 'node:path';
import { mkdirSync } from 'node:fs';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql } from 'kysely';
import type { Database } from './schema.js';
import { migrations } from './migrations/index.js';

export type Db = Kysely<Database>;
export type DialectName = 'sqlite' | 'postgres';

export interface Store {
  db: Db;
  dialect: DialectName;
  /** Where it lives, without credentials, for logs. */
  location: string;
  close(): Promise<void>;
}

/**
 * Opens the store: Postgres when the URL says postgres://, otherwise SQLite
 * on disk (WAL, so readers never wait for the writer). `sqlite://relative`
 * resolves against the data directory.
 */
export function openStore(dataDir: string, databaseUrl?: string): Store {
  if (databaseUrl && /^postgres(ql)?:\/\//.test(databaseUrl)) {
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    const url = new URL(databaseUrl);
    return { db, dialect: 'postgres', location: `postgres://${url.host}${url.pathname}`, close: () => db.destroy() };
  }
  const file = databaseUrl ? path.resolve(dataDir, databaseUrl.replace(/^sqlite:\/\//, '')) : path.join(dataDir, 'caseflow.db');
  mkdirSync(path.dirname(file), { recursive: true });
  const database = new SQLite(file);
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('busy_timeout = 5000');
  database.pragma('foreign_keys = ON');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
  return { db, dialect: 'sqlite', location: file, close: () => db.destroy() };
}

export async function migrateToLatest(db: Db): Promise<string[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

export async function pingStore(db: Db): Promise<void> {
  await sql`select 1`.execute(db);
}
