import { randomUUID } from 'node:crypto';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import {
  retentionTimerOf,
  retentionTimers,
  temporalTime,
  uuidText,
  withIds,
  type IdSwaps,
} from './bench-fill-server-rows.js';

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
 * service and the server make them), inside the server's state blobs too
 * (bench-fill-server-rows.ts); the history blobs are the template's bytes,
 * so the filled runs are for size, not for reading.
 * The runs' transfer tasks are left out, and their retention timers unless
 * `deletingPerSecond` is set.
 */
export interface FillOptions {
  cases: number;
  /**
   * Every copy carries its run's retention timer (DeleteHistoryEvent), the oldest due first, this many falling
   * due per second from the fill's end: the server deletes day-old runs while it takes new ones, as it does at
   * steady state. Absent: no timer, nothing deleted during the bench.
   */
  deletingPerSecond?: number;
}

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

/**
 * One retention timer per copied run, in the order the runs were copied (the oldest first), the k-th due at
 * `due(k)`: copies of one template share its task id, so each needs a time of its own in the timer queue's
 * (time, task id) key.
 */
function writeRetentionTimers(
  temporal: SQLite.Database,
  templates: ReadonlyArray<{ workflowId: string; runText: string; timer: { row: Row; copy: Copy } | undefined }>,
  copiedAfter: number,
  due: (k: number) => Date,
): void {
  const page = temporal.prepare(
    'select rowid, workflow_id, run_id from executions where rowid > ? order by rowid limit 10000',
  );
  for (let k = 0, after = copiedAfter; ;) {
    const copies = page.all(after) as Array<{ rowid: number; workflow_id: string; run_id: Buffer }>;
    if (copies.length === 0) return;
    temporal.transaction(() => {
      for (const copy of copies) {
        const t = templates[k % templates.length];
        if (!t?.timer) throw new Error('bench fill: a template without its retention timer');
        const swaps: IdSwaps = [
          [t.runText, uuidText(copy.run_id)],
          [t.workflowId, copy.workflow_id],
        ];
        t.timer.copy(retentionTimerOf(t.timer.row, swaps, due(k)));
        k++;
      }
    })();
    after = copies.at(-1)?.rowid ?? after;
  }
}

export function fillStores(dataDir: string, { cases, deletingPerSecond }: FillOptions): FillResult {
  // Whole milliseconds in the timer key: at most one due per millisecond keeps every copy's time its own.
  if (deletingPerSecond && deletingPerSecond > 1000) throw new Error('bench fill: at most 1000 deletions a second');
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
    const timers = deletingPerSecond ? retentionTimers(temporal) : undefined;
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
      timer: copier(temporal, 'timer_tasks'),
    };
    const times = ['start_time', 'execution_time', 'close_time'];
    const template = templates.map((c) => {
      const workflowId = String(c.temporal_workflow_id);
      const execution = executionOf.get(workflowId) as Row | undefined;
      if (!execution) throw new Error(`bench fill: no Temporal run for ${workflowId}`);
      const caseTimes = ['created_at', 'started_at', 'finished_at'];
      const current = currentOf.get(workflowId) as Row;
      const trees = treesOf.all(execution.run_id) as Row[];
      const runText = uuidText(execution.run_id as Buffer);
      const timer = timers?.get(runText);
      if (timers && !timer) throw new Error(`bench fill: no retention timer for the run of ${workflowId}`);
      return {
        workflowId,
        runText,
        blobs: { data: execution.data as Buffer, state: execution.state as Buffer, current: current.data as Buffer },
        case: copy.case(c, ['id', 'entity_id', 'temporal_workflow_id', 'temporal_run_id', ...caseTimes]),
        nodes: (nodesOf.all(c.id) as Row[]).map((n) => copy.node(n, ['case_id', 'started_at', 'finished_at'])),
        deliveries: (deliveriesOf.all(c.id) as Row[]).map((d) => ({
          // Delivery ids are the case's id and a suffix (its end, or a subscription's).
          suffix: String(d.id).slice(String(c.id).length),
          copy: copy.delivery(d, ['id', 'case_id', 'workflow_id', 'created_at', 'updated_at']),
          attempts: (attemptsOf.all(d.id) as Row[]).map((a) => copy.attempt(a, ['delivery_id', 'started_at'])),
        })),
        execution: copy.execution(execution, ['workflow_id', 'run_id', 'data', 'state']),
        current: copy.current(current, ['workflow_id', 'run_id', 'start_time', 'data']),
        trees: trees.map((t) => ({ data: t.data as Buffer, copy: copy.tree(t, ['tree_id', 'data']) })),
        history: (historyOf.all(execution.run_id) as Row[]).map((h) => copy.history(h, ['tree_id'])),
        visibility: copy.visibility(visibilityOf.get(workflowId) as Row, ['run_id', 'workflow_id', ...times]),
        timer: timer && { row: timer, copy: copy.timer(timer, ['data', 'visibility_timestamp']) },
      };
    });
    // The copies' mutable state rows follow these in insertion order: the retention timers are written from them.
    const copiedAfter = Number(temporal.prepare('select coalesce(max(rowid), 0) from executions').pluck().get());
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
      const swaps: IdSwaps = [
        [t.runText, run.text],
        [t.workflowId, workflowId],
      ];
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
      t.execution({
        workflow_id: workflowId,
        run_id: run.bytes,
        data: withIds(t.blobs.data, swaps),
        state: withIds(t.blobs.state, swaps),
      });
      t.current({
        workflow_id: workflowId,
        run_id: run.bytes,
        start_time: time,
        data: withIds(t.blobs.current, swaps),
      });
      for (const tree of t.trees) tree.copy({ tree_id: run.bytes, data: withIds(tree.data, swaps) });
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
    // Last, so that the first falls due as the fill ends, not while the indexes are built.
    if (deletingPerSecond) {
      const from = Date.now();
      const due = (k: number) => new Date(from + Math.floor((k * 1000) / deletingPerSecond));
      writeRetentionTimers(temporal, template, copiedAfter, due);
    }
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
