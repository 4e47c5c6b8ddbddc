import { PostgresAdapter, sql, type RawBuilder } from 'kysely';
import type { Db } from './database.js';

/** Seconds from one ISO-text time column to another: each dialect has its own way to subtract two of them. */
export function secondsBetween(db: Db, start: string, end: string): RawBuilder<number> {
  return db.getExecutor().adapter instanceof PostgresAdapter
    ? sql<number>`extract(epoch from (${sql.ref(end)}::timestamptz - ${sql.ref(start)}::timestamptz))`
    : sql<number>`(julianday(${sql.ref(end)}) - julianday(${sql.ref(start)})) * 86400`;
}
