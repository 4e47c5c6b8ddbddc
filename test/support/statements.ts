import { CompiledQuery } from 'kysely';
import type { Db } from '../../src/store/database.js';

export interface StatementLog {
  /** The SQL of the statements run since the last take, oldest first; the log starts empty again. */
  take(): string[];
}

/**
 * Records every statement a SQLite store runs, transaction control included. kysely's SQLite
 * driver keeps one connection for the store's lifetime, so wrapping it sees everything; the
 * production code paths carry no per-statement hook.
 */
export async function recordStatements(db: Db): Promise<StatementLog> {
  const connection = await db.getExecutor().provideConnection((c) => Promise.resolve(c));
  const seen: string[] = [];
  const execute = connection.executeQuery.bind(connection);
  connection.executeQuery = (query) => {
    seen.push(query.sql);
    return execute(query);
  };
  return { take: () => seen.splice(0) };
}

/** SQLite's plan of `statement`, its parameters bound to null (the plan does not read them: no statistics). */
export async function planOf(db: Db, statement: string): Promise<string[]> {
  const parameters = Array.from(statement.matchAll(/\?/g), () => null);
  const r = await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${statement}`, parameters));
  return r.rows.map((row) => row.detail);
}
