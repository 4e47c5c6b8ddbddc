import { randomUUID } from 'node:crypto';
import path from 'node:path';
import SQLite from 'better-sqlite3';

/**
 * Steady state for `npm run bench -- e2e` (BENCH_E2E_FILL=n): fills a stopped
 * `npm start`'s data directory with n cases spread over the 24 h before now,
 * copied row by row from the cases it already ran (the templates), in both of
 * its stores:
 * - caseflow.db: the case, its nodes, its callback delivery and attempt;
 * - temporal.db: the run's mutable state, current execution, history tree
 *   and nodes, and its visibility row (the server's own triggers keep the
 *   full-text tables).
 * Each copy gets a case id, run id and times of its own (random ids, as the
 * service and the server make them); the history blobs are the template's
 * bytes, so the filled runs are for size, not for reading.
 * What is left out: the runs' timer and transfer tasks, so the namespace's
 * retention does not delete them during the bench.
 */
export interface FillResult {
  cases: number;
  seconds: number;
  /** Of `seconds`, building the secondary indexes once at the end. */
  indexSeconds: number;
  /** The files' sizes once filled. */
  bytes: { caseflow: number; temporal: number };
}

type Row = Record<string, unknown>;
/** Inserts one copy of a template row with the values of the columns it replaces. */
type Copy = (values: Row) => void;

/**
 * Copies of a table's rows, one prepared statement per table: `of(row, replaced)` binds the template's
 * values by position once, and each copy replaces only the named columns (no object of every column per row).
 */
function copier(db: SQLite.Database, table: string): (row: Row, replaced: readonly string[]) => Copy {
  const columns = (db.prepare(`pragma table_info("${table}")`).all() as Array<{ name: string }>).map((c) => c.name);
  const insert = db.prepare(
    `insert into "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) values (${columns.map(() => '?').join(', ')})`,
  );
  return (row, replaced) => {
    // A renamed column would otherwise keep the template's value silently.
    const unknown = replaced.filter((name) => !columns.includes(name));
    if (unknown.length > 0) throw new Error(`bench fill: ${table} has no column ${unknown.join(', ')}`);
    const template = columns.map((c) => row[c]);
    const at = replaced.map((name) => [name, columns.indexOf(name)] as const);
    return (values) => {
      const bound = template.slice();
      for (const [name, i] of at) bound[i] = values[name];
      insert.run(bound);
    };
  };
}

/** Run ids as Temporal's SQL store keeps them: 16 bytes, and the same as text in visibility. */
function runId(): { bytes: Buffer; text: string } {
  const text = randomUUID();
  return { bytes: Buffer.from(text.replaceAll('-', ''), 'hex'), text };
}

/** The time of the i-th of n cases spread evenly over the 24 h before `now`. */
function spread(now: number, i: number, n: number): Date {
  return new Date(now - 24 * 3600_000 + Math.floor((i * 24 * 3600_000) / n));
}

const temporalTime = (d: Date) => d.toISOString().replace('T', ' ').replace('Z', '+00:00');

/**
 * A scratch copy's settings while it is written: no journal and no syncs (the bench throws the directory away
 * if the fill fails), and a cache that holds the primary keys' pages, which random ids touch all over.
 */
function forBulkWrites(db: SQLite.Database): void {
  db.pragma('journal_mode = off');
  db.pragma('synchronous = off');
  db.pragma('cache_size = -1048576');
  db.pragma('temp_store = memory');
}

/**
 * Drops the secondary indexes of `tables` and returns what builds them again: one sorted pass per index at the
 * end instead of a random insert into each per row (the primary keys' own indexes stay).
 */
function dropIndexes(db: SQLite.Database, tables: readonly string[]): () => void {
  const indexes = db
    .prepare(
      `select name, sql from sqlite_master where type = 'index' and sql is not null
         and tbl_name in (${tables.map(() => '?').join(', ')})`,
    )
    .all(...tables) as Array<{ name: string; sql: string }>;
  for (const { name } of indexes) db.exec(`drop index "${name}"`);
  return () => {
    for (const { sql } of indexes) db.exec(sql);
  };
}

const fileBytes = (db: SQLite.Database) =>
  Number(db.pragma('page_count', { simple: true })) * Number(db.pragma('page_size', { simple: true }));

export function fillStores(dataDir: string, cases: number): FillResult {
  const started = performance.now();
  const caseflow = new SQLite(path.join(dataDir, 'caseflow.db'));
  const temporal = new SQLite(path.join(dataDir, 'temporal.db'));
  try {
    forBulkWrites(caseflow);
    forBulkWrites(temporal);
    const templates = caseflow.prepare(`select * from cases where status = 'COMPLETED'`).all() as Row[];
    if (templates.length === 0) throw new Error('bench fill: no completed case to copy');
    const nodesOf = caseflow.prepare('select * from case_nodes where case_id = ?');
    const deliveriesOf = caseflow.prepare('select * from callback_deliveries where case_id = ?');
    const attemptsOf = caseflow.prepare('select * from callback_attempts where delivery_id = ?');
    const executionOf = temporal.prepare('select * from executions where workflow_id = ?');
    const currentOf = temporal.prepare('select * from current_executions where workflow_id = ?');
    const treesOf = temporal.prepare('select * from history_tree where tree_id = ?');
    const historyOf = temporal.prepare('select * from history_node where tree_id = ?');
    const visibilityOf = temporal.prepare('select * from executions_visibility where workflow_id = ?');
    const copy = {
      case: copier(caseflow, 'cases'),
      node: copier(caseflow, 'case_nodes'),
      delivery: copier(caseflow, 'callback_deliveries'),
      attempt: copier(caseflow, 'callback_attempts'),
      execution: copier(temporal, 'executions'),
      current: copier(temporal, 'current_executions'),
      tree: copier(temporal, 'history_tree'),
      history: copier(temporal, 'history_node'),
      visibility: copier(temporal, 'executions_visibility'),
    };
    const times = ['start_time', 'execution_time', 'close_time'];
    const template = templates.map((c) => {
      const workflowId = String(c.temporal_workflow_id);
      const execution = executionOf.get(workflowId) as Row | undefined;
      if (!execution) throw new Error(`bench fill: no Temporal run for ${workflowId}`);
      const caseTimes = ['created_at', 'started_at', 'finished_at'];
      return {
        case: copy.case(c, ['id', 'entity_id', 'temporal_workflow_id', 'temporal_run_id', ...caseTimes]),
        nodes: (nodesOf.all(c.id) as Row[]).map((n) => copy.node(n, ['case_id', 'started_at', 'finished_at'])),
        deliveries: (deliveriesOf.all(c.id) as Row[]).map((d) => ({
          // Delivery ids are the case's id and a suffix (its end, or a subscription's).
          suffix: String(d.id).slice(String(c.id).length),
          copy: copy.delivery(d, ['id', 'case_id', 'workflow_id', 'created_at', 'updated_at']),
          attempts: (attemptsOf.all(d.id) as Row[]).map((a) => copy.attempt(a, ['delivery_id', 'started_at'])),
        })),
        execution: copy.execution(execution, ['workflow_id', 'run_id']),
        current: copy.current(currentOf.get(workflowId) as Row, ['workflow_id', 'run_id', 'start_time']),
        trees: (treesOf.all(execution.run_id) as Row[]).map((t) => copy.tree(t, ['tree_id'])),
        history: (historyOf.all(execution.run_id) as Row[]).map((h) => copy.history(h, ['tree_id'])),
        visibility: copy.visibility(visibilityOf.get(workflowId) as Row, ['run_id', 'workflow_id', ...times]),
      };
    });
    const indexCaseflow = dropIndexes(caseflow, ['cases', 'case_nodes', 'callback_deliveries', 'callback_attempts']);
    const indexTemporal = dropIndexes(temporal, [
      'executions',
      'current_executions',
      'history_tree',
      'history_node',
      'executions_visibility',
    ]);
    const now = Date.now();
    const one = (i: number) => {
      const t = template[i % template.length];
      if (!t) return;
      const at = spread(now, i, cases);
      const iso = at.toISOString();
      const time = temporalTime(at);
      const caseId = randomUUID();
      const workflowId = `case-${caseId}`;
      const run = runId();
      t.case({
        id: caseId,
        entity_id: randomUUID(),
        temporal_workflow_id: workflowId,
        temporal_run_id: run.text,
        created_at: iso,
        started_at: iso,
        finished_at: iso,
      });
      for (const node of t.nodes) node({ case_id: caseId, started_at: iso, finished_at: iso });
      for (const d of t.deliveries) {
        const deliveryId = `${caseId}${d.suffix}`;
        d.copy({ id: deliveryId, case_id: caseId, workflow_id: workflowId, created_at: iso, updated_at: iso });
        for (const attempt of d.attempts) attempt({ delivery_id: deliveryId, started_at: iso });
      }
      t.execution({ workflow_id: workflowId, run_id: run.bytes });
      t.current({ workflow_id: workflowId, run_id: run.bytes, start_time: time });
      for (const tree of t.trees) tree({ tree_id: run.bytes });
      for (const node of t.history) node({ tree_id: run.bytes });
      t.visibility({
        run_id: run.text,
        workflow_id: workflowId,
        start_time: time,
        execution_time: time,
        close_time: time,
      });
    };
    const batch = 10_000;
    for (let from = 0; from < cases; from += batch) {
      caseflow.transaction(() =>
        temporal.transaction(() => {
          for (let i = from; i < Math.min(cases, from + batch); i++) one(i);
        })(),
      )();
    }
    const indexing = performance.now();
    indexCaseflow();
    indexTemporal();
    const indexSeconds = (performance.now() - indexing) / 1000;
    // As the service and the server keep them (each sets it again when it opens its file).
    for (const db of [caseflow, temporal]) db.pragma('journal_mode = wal');
    return {
      cases,
      seconds: (performance.now() - started) / 1000,
      indexSeconds,
      bytes: { caseflow: fileBytes(caseflow), temporal: fileBytes(temporal) },
    };
  } finally {
    caseflow.close();
    temporal.close();
  }
}
