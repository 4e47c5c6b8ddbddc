import type { Compilable, QueryResult } from 'kysely';
import { CompiledStatement } from './compiled-statement.js';
import type { Db } from './database.js';

/** Row counts whose statements are kept: a service runs few graph shapes, and a 500-row statement's SQL is large. */
const KEPT_COUNTS = 16;

/** Each row's fields as one statement's values, `<row>.<field>`. */
function flatten(rows: readonly object[]): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  rows.forEach((row, i) => {
    for (const [field, value] of Object.entries(row)) values[`${i}.${field}`] = value;
  });
  return values;
}

/** The rows back from flattened values (the stand-ins CompiledStatement compiles with). */
function unflatten<Row>(values: Record<string, unknown>, count: number): Row[] {
  const rows: Array<Record<string, unknown>> = Array.from({ length: count }, () => ({}));
  for (const [name, value] of Object.entries(values)) {
    const dot = name.indexOf('.');
    const row = rows[Number(name.slice(0, dot))];
    if (row) row[name.slice(dot + 1)] = value;
  }
  // The stand-ins are not of Row's types: kysely only carries them into the parameter list.
  return rows as Row[];
}

/**
 * A statement over a list of rows (a multi-row insert), compiled once per row count and run with each call's
 * rows (CompiledStatement's rules per row: every row has the same fields, and no value changes the SQL). A case's
 * end writes its node records and deliveries this way: kysely building an insert of 3 rows of 16 fields costs
 * more than SQLite running it.
 */
export class CompiledRows<Row extends object, R> {
  private readonly byCount = new Map<number, CompiledStatement<Record<string, unknown>, R>>();

  constructor(private readonly build: (db: Db, rows: Row[]) => Compilable<R>) {}

  /** Runs the statement on `db` (the store, or a transaction of it) with `rows` (at least one). */
  run(db: Db, rows: readonly Row[]): Promise<QueryResult<R>> {
    const count = rows.length;
    let statement = this.byCount.get(count);
    if (!statement) {
      statement = new CompiledStatement((on, values) => this.build(on, unflatten<Row>(values, count)));
      // The oldest count goes first: Map keeps insertion order.
      if (this.byCount.size >= KEPT_COUNTS) this.byCount.delete(this.byCount.keys().next().value ?? count);
      this.byCount.set(count, statement);
    }
    return statement.run(db, flatten(rows));
  }
}
