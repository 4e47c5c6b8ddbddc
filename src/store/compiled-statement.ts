import { CompiledQuery, type Compilable, type QueryResult } from 'kysely';
import type { Db } from './database.js';

/** Stands for one of a statement's values while kysely compiles it; each run binds the value given for its name. */
class Slot {
  constructor(readonly name: string) {}
}

/** The value a run gives for a stand-in; undefined would have left its column out of the SQL, so it is refused. */
function valueOf(values: object, name: string): unknown {
  const value: unknown = Reflect.get(values, name);
  if (value === undefined) throw new Error(`a compiled statement was run without a value for ${name}`);
  return value;
}

interface Compiled {
  sql: string;
  parameters: readonly unknown[];
  keys: ReadonlySet<string>;
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
  private compiled?: Compiled;

  constructor(private readonly build: (db: Db, values: V) => Compilable<R>) {}

  /** Runs the statement on `db` (the store, or a transaction of it) with `values`. */
  async run(db: Db, values: V): Promise<QueryResult<R>> {
    const compiled = (this.compiled ??= this.compile(db, values));
    // A key the first run lacked is not in the SQL: its value would be dropped without a word.
    if (Object.keys(values).some((name) => !compiled.keys.has(name)))
      throw new Error(
        `a compiled statement was run with values it was not compiled for (${[...compiled.keys].join(', ')})`,
      );
    const parameters = compiled.parameters.map((p) => (p instanceof Slot ? valueOf(values, p.name) : p));
    return db.executeQuery<R>(CompiledQuery.raw(compiled.sql, parameters));
  }

  private compile(db: Db, first: V): Compiled {
    const keys = Object.keys(first);
    // The stand-ins are not of V's types: kysely only carries them into the parameter list, where run replaces them.
    const slots = Object.fromEntries(keys.map((name) => [name, new Slot(name)])) as V;
    const { sql, parameters } = this.build(db, slots).compile();
    // A set: a multi-row insert's values are hundreds of names (compiled-rows.ts).
    return { sql, parameters, keys: new Set(keys) };
  }
}
