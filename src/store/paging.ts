import { sql, type RawBuilder } from 'kysely';
import type { Page } from '../domain/page.js';

/** Walks a table in key order, a page at a time: `fetch(after)` returns the rows after that key. */
export async function forEachRow<T>(
  fetch: (after: string) => Promise<T[]>,
  keyOf: (row: T) => string,
  visit: (row: T) => Promise<void>,
): Promise<void> {
  let after = '';
  for (;;) {
    const page = await fetch(after);
    for (const row of page) await visit(row);
    const last = page.at(-1);
    if (last === undefined) return;
    after = keyOf(last);
  }
}

/** A position in a newest-first list: the last row's creation time and id (ids break ties). */
export interface Keyset {
  createdAt: string;
  id: string;
}

/** The opaque cursor a list answers with (base64url JSON), so clients cannot depend on its shape. */
export function encodeCursor(position: Keyset): string {
  return Buffer.from(JSON.stringify([position.createdAt, position.id]), 'utf8').toString('base64url');
}

/** The position a cursor names; undefined when it is not one this service gave out. */
export function decodeCursor(cursor: string): Keyset | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (!Array.isArray(value) || value.length !== 2) return undefined;
    const [createdAt, id] = value as unknown[];
    return typeof createdAt === 'string' && typeof id === 'string' ? { createdAt, id } : undefined;
  } catch {
    return undefined;
  }
}

/** Rows of `table` after `position` in newest-first order (row values: one index range in SQLite and Postgres). */
export function olderThan(table: string, position: Keyset): RawBuilder<boolean> {
  return sql<boolean>`(${sql.ref(`${table}.created_at`)}, ${sql.ref(`${table}.id`)}) < (${position.createdAt}, ${position.id})`;
}

/** Where `column` contains `text`, ignoring case; LIKE's wildcards in `text` match themselves. */
export function containsText(column: string, text: string): RawBuilder<boolean> {
  const pattern = `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  return sql<boolean>`lower(${sql.ref(column)}) like lower(${pattern}) escape '\\'`;
}

/** Which rows a lister sees: its organization's, and with a workspace-scoped key only those workspaces'. */
export interface ListScope {
  organizationId: string;
  /** Never empty (a key that reaches no workspace lists nothing without asking). */
  workspaceIds?: string[];
}

/** Fetches one row more than `limit` to know whether another page follows. */
export async function pageOf<T extends Keyset>(limit: number, fetch: (take: number) => Promise<T[]>): Promise<Page<T>> {
  const rows = await fetch(limit + 1);
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return { items, nextCursor: rows.length > limit && last ? encodeCursor(last) : null };
}
