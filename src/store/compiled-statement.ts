import { CompiledQuery, type Compilable, type QueryResult } from 'kysely';
import type { Db } from './database.js';

/** Stands for one of a statement's values while kysely compiles it: the field `name` of the run's row `row`. */
class Slot {
  constructor(
    readonly row: number,
    readonly name: string,
    /** How errors name it. */
    readonly label: string,
  ) {}
}

/** The value a run gives for a stand-in; undefined would have left its column out of the SQL, so it is refused. */
function valueOf(rows: readonly object[], slot: Slot): unknown {
  const row = rows[slot.row];
  const value: unknown = row === undefined ? undefined : Reflect.get(row, slot.name);
  if (value === undefined) throw new Error(`a compiled statement was run without a value for ${slot.label}`);
  return value;
}

interface Compiled {
  sql: string;
  parameters: readonly unknown[];
  /** Each row's fields at the first run (a multi-row insert's rows carry dozens each). */
  fields: ReadonlyArray<ReadonlySet<string>>;
}

/**
 * A statement over a fixed number of rows of values (one for most statements, a multi-row insert's rows),
 * compiled at its first run with a stand-in for every field of every row, then run with each call's rows:
 * each stand-in in the parameters is replaced by the value of its row's field, read where the caller put it.
 */
export class CompiledRowValues<Row extends object, R> {
  private compiled?: Compiled;

  constructor(
    private readonly build: (db: Db, rows: Row[]) => Compilable<R>,
    /** How errors name a row's field: `id` for a single row's statement, `0.id` for a multi-row insert's. */
    private readonly label: (row: number, name: string) => string,
  ) {}

  /** Runs the statement on `db` (the store, or a transaction of it) with `rows` (as many as the first run's). */
  async run(db: Db, rows: readonly Row[]): Promise<QueryResult<R>> {
    const compiled = (this.compiled ??= this.compile(db, rows));
    rows.forEach((row, i) => {
      const fields = compiled.fields[i];
      // A field the first run lacked is not in the SQL: its value would be dropped without a word.
      if (!fields || Object.keys(row).some((name) => !fields.has(name)))
        throw new Error(
          `a compiled statement was run with values it was not compiled for (${[...(fields ?? [])].map((name) => this.label(i, name)).join(', ')})`,
        );
    });
    const parameters = compiled.parameters.map((p) => (p instanceof Slot ? valueOf(rows, p) : p));
    return db.executeQuery<R>(CompiledQuery.raw(compiled.sql, parameters));
  }

  private compile(db: Db, first: readonly Row[]): Compiled {
    const fields = first.map((row) => Object.keys(row));
    // The stand-ins are not of Row's types: kysely only carries them into the parameter list, where run replaces them.
    const slots = fields.map(
      (names, row) =>
        Object.fromEntries(names.map((name) => [name, new Slot(row, name, this.label(row, name))])) as Row,
    );
    const { sql, parameters } = this.build(db, slots).compile();
    return { sql, parameters, fields: fields.map((names) => new Set(names)) };
  }
}

/**
 * A statement kysely builds and compiles once, then runs with each call's values: for the few statements
 * every case runs, building and compiling the query anew cost about as much main-thread CPU as SQLite
 * running it (docs/performance.md, twelfth round). `build` gets a stand-in for each key of the first
 * run's values, to use where kysely binds a value (a comparison's operand, a `set` or an inserted row's
 * field); anything else in it is fixed then. So every run passes the same keys, and no value may change
 * the SQL: not an `in` list, not a condition added or not, not `undefined` (null is a value).
 * Compiled by the first store it runs on (a repository serves one store, so one dialect).
 */
export class CompiledStatement<V extends object, R> {
  private readonly statement: CompiledRowValues<V, R>;

  constructor(build: (db: Db, values: V) => Compilable<R>) {
    this.statement = new CompiledRowValues(
      (db, [values]) => build(db, values as V),
      (_row, name) => name,
    );
  }

  /** Runs the statement on `db` (the store, or a transaction of it) with `values`. */
  run(db: Db, values: V): Promise<QueryResult<R>> {
    return this.statement.run(db, [values]);
  }
}
