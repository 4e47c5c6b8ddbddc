import Database from 'better-sqlite3';

/**
 * Secondary indexes of the embedded server's SQLite visibility table that no list caseflow's users make
 * needs. The server creates 58 on `executions_visibility`, and writing a run's row (once per case, at
 * its close) updates every one of them: in SQLite's own C code that is ~1.6 ms of CPU per row with all
 * of them against ~0.45 ms with the handful kept (docs/performance.md, "Twelfth round"), and the server
 * runs a pure-Go SQLite. Dropped: the columns of the pre-allocated custom search attributes of types
 * caseflow registers none of (Bool, Datetime, Double, Int), the server's own ones of features caseflow
 * does not use (worker deployments, versioning, pause, batcher), and the numeric sorts the UI does not
 * offer (history length and size, duration, transitions). Kept: the default order, by workflow id,
 * type, status, execution time, task queue, parent and root workflow, namespace division and the
 * schedule columns, and every custom Keyword column (caseflow's own search attributes are Keywords,
 * an operator may register more; the server's own spare Keyword columns are dropped). A list filtered on a dropped column still answers, by scanning.
 */
export const UNUSED_VISIBILITY_INDEXES: readonly string[] = [
  'by_history_length',
  'by_history_size_bytes',
  'by_execution_duration',
  'by_state_transition_count',
  'by_parent_run_id',
  'by_root_run_id',
  'by_batcher_user',
  'by_temporal_schedule_paused',
  'by_temporal_pause_info',
  'by_temporal_worker_deployment_version',
  'by_temporal_workflow_versioning_behavior',
  'by_temporal_worker_deployment',
  ...['bool', 'datetime', 'double', 'int'].flatMap((type) => [1, 2, 3].map((n) => `by_${type}_0${n}`)),
  ...['bool', 'datetime', 'double', 'int'].flatMap((type) => [1, 2].map((n) => `by_temporal_${type}_0${n}`)),
  ...[1, 2, 3, 4].map((n) => `by_temporal_keyword_0${n}`),
  'by_temporal_low_cardinality_keyword_01',
];

/**
 * Drops the unused visibility indexes from the server's database file. Only while no server has the
 * file open: the caller runs it between the server's runs. Idempotent (a server upgrade that creates
 * them again has them dropped at the next start). Returns the names dropped.
 */
export function pruneVisibilityIndexes(dbFilename: string): string[] {
  const db = new Database(dbFilename, { fileMustExist: true });
  try {
    const present = new Set(
      db
        .prepare<[], { name: string }>(
          "select name from sqlite_master where type = 'index' and tbl_name = 'executions_visibility'",
        )
        .all()
        .map((row) => row.name),
    );
    const dropped = UNUSED_VISIBILITY_INDEXES.filter((name) => present.has(name));
    if (dropped.length > 0) {
      db.transaction(() => {
        for (const name of dropped) db.exec(`drop index if exists "${name}"`);
      })();
    }
    return dropped;
  } finally {
    db.close();
  }
}
