import type { Compilable, QueryResult } from 'kysely';
import { CompiledRowValues } from './compiled-statement.js';
import type { Db } from './database.js';

/** Row counts whose statements are kept: a service runs few graph shapes, and a 500-row statement's SQL is large. */
const KEPT_COUNTS = 16;

/**
 * A statement over a list of rows (a multi-row insert), compiled once per row count and run with each call's
 * rows (CompiledStatement's rules per row: every row has the same fields, and no value changes the SQL). A case's
 * end writes its node records and deliveries this way: kysely building an insert of 3 rows of 16 fields costs
 * more than SQLite running it. The values are read from the rows themselves, not copied into one object first.
 */
export class CompiledRows<Row extends object, R> {
  private readonly byCount = new Map<number, CompiledRowValues<Row, R>>();

  constructor(private readonly build: (db: Db, rows: Row[]) => Compilable<R>) {}

  /** Runs the statement on `db` (the store, or a transaction of it) with `rows` (at least one). */
  run(db: Db, rows: readonly Row[]): Promise<QueryResult<R>> {
    const count = rows.length;
    let statement = this.byCount.get(count);
    if (!statement) {
      statement = new CompiledRowValues(this.build, (row, name) => `${row}.${name}`);
      // The oldest count goes first: Map keeps insertion order.
      if (this.byCount.size >= KEPT_COUNTS) this.byCount.delete(this.byCount.keys().next().value ?? count);
      this.byCount.set(count, statement);
    }
    return statement.run(db, rows);
  }
}
