import { workflowContract } from './contract.js';

/** What one retention run removed. */
export interface RetentionRunResult {
  casesErased: number;
  rowsDeleted: number;
  /** Bytes the SQLite file shrank by (0 on Postgres: autovacuum reuses the space). */
  bytesReclaimed: number;
}

/** One pass of the retention policies over the store, started by the retention schedule (workflows/retention-purge.ts). */
export const retentionPurgeContract = workflowContract<() => Promise<RetentionRunResult>>('retentionPurge');

/** The schedule that starts it, one per task queue (several deployments may share a namespace). */
export const retentionScheduleId = (taskQueue: string) => `caseflow-retention-${taskQueue}`;
