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
 * Each copy gets a case id, run id and times of its own; the history blobs
 * are the template's bytes, so the filled runs are for size, not for reading.
 * What is left out: the runs' timer and transfer tasks, so the namespace's
 * retention does not delete them during the bench.
 */
export interface FillResult {
  cases: number;
  seconds: number;
}

type Row = Record<string, unknown>;

/** `INSERT INTO table` of a row read from it with some columns replaced: one prepared statement per table. */
function copier(db: SQLite.Database, table: string): (row: Row, values: Row) => void {
  const columns = (db.prepare(`pragma table_info("${table}")`).all() as Array<{ name: string }>).map((c) => c.name);
  const insert = db.prepare(
    `insert into "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) values (${columns.map((c) => `@${c}`).join(', ')})`,
  );
  let checked = false;
  return (row, values) => {
    // A renamed column would otherwise keep the template's value silently.
    if (!checked) {
      const unknown = Object.keys(values).filter((name) => !columns.includes(name));
      if (unknown.length > 0) throw new Error(`bench fill: ${table} has no column ${unknown.join(', ')}`);
      checked = true;
    }
    insert.run({ ...row, ...values });
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

export function fillStores(dataDir: string, cases: number): FillResult {
  const started = performance.now();
  const caseflow = new SQLite(path.join(dataDir, 'caseflow.db'));
  const temporal = new SQLite(path.join(dataDir, 'temporal.db'));
  try {
    for (const db of [caseflow, temporal]) db.pragma('journal_mode = wal');
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
    const template = templates.map((c) => {
      const workflowId = String(c.temporal_workflow_id);
      const execution = executionOf.get(workflowId) as Row | undefined;
      if (!execution) throw new Error(`bench fill: no Temporal run for ${workflowId}`);
      const deliveries = deliveriesOf.all(c.id) as Row[];
      return {
        row: c,
        nodes: nodesOf.all(c.id) as Row[],
        deliveries: deliveries.map((d) => ({ row: d, attempts: attemptsOf.all(d.id) as Row[] })),
        execution,
        current: currentOf.get(workflowId) as Row,
        trees: treesOf.all(execution.run_id) as Row[],
        history: historyOf.all(execution.run_id) as Row[],
        visibility: visibilityOf.get(workflowId) as Row,
      };
    });
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
    // Built once at the end instead of row by row: the visibility table's 58 secondary indexes (2.5× faster).
    const indexes = temporal
      .prepare(
        `select name, sql from sqlite_master where type = 'index' and tbl_name = 'executions_visibility' and sql is not null`,
      )
      .all() as Array<{ name: string; sql: string }>;
    for (const { name } of indexes) temporal.exec(`drop index "${name}"`);
    const now = Date.now();
    const batch = 2000;
    for (let from = 0; from < cases; from += batch) {
      const one = (i: number) => {
        const t = template[i % template.length];
        if (!t) return;
        const at = spread(now, i, cases);
        const iso = at.toISOString();
        const caseId = randomUUID();
        const workflowId = `case-${caseId}`;
        const run = runId();
        copy.case(t.row, {
          id: caseId,
          entity_id: randomUUID(),
          temporal_workflow_id: workflowId,
          temporal_run_id: run.text,
          created_at: iso,
          started_at: iso,
          finished_at: iso,
        });
        for (const node of t.nodes) copy.node(node, { case_id: caseId, started_at: iso, finished_at: iso });
        for (const d of t.deliveries) {
          // Delivery ids are the case's id and a suffix (its end, or a subscription's).
          const deliveryId = `${caseId}${String(d.row.id).slice(String(t.row.id).length)}`;
          copy.delivery(d.row, {
            id: deliveryId,
            case_id: caseId,
            workflow_id: workflowId,
            created_at: iso,
            updated_at: iso,
          });
          for (const a of d.attempts) copy.attempt(a, { delivery_id: deliveryId, started_at: iso });
        }
        copy.execution(t.execution, { workflow_id: workflowId, run_id: run.bytes });
        copy.current(t.current, { workflow_id: workflowId, run_id: run.bytes, start_time: temporalTime(at) });
        for (const tree of t.trees) copy.tree(tree, { tree_id: run.bytes });
        for (const node of t.history) copy.history(node, { tree_id: run.bytes });
        const time = temporalTime(at);
        copy.visibility(t.visibility, {
          run_id: run.text,
          workflow_id: workflowId,
          start_time: time,
          execution_time: time,
          close_time: time,
        });
      };
      // One transaction per store and batch: both files stay consistent at every batch's end.
      caseflow.transaction(() =>
        temporal.transaction(() => {
          for (let i = from; i < Math.min(cases, from + batch); i++) one(i);
        })(),
      )();
    }
    for (const { sql } of indexes) temporal.exec(sql);
    return { cases, seconds: (performance.now() - started) / 1000 };
  } finally {
    caseflow.close();
    temporal.close();
  }
}
