import { concurrentIndexMigration, type ConcurrentIndex } from './concurrent-index.js';

/**
 * Cases by status: the background passes (unstarted runs every few seconds, the reconciler every
 * minute, the queued gauge) ask for RUNNING or QUEUED cases of every organization. Without it they
 * read the whole table, which grows by every case ever run: on a store holding 100 000 cases the
 * Node thread's CPU per case was ~1.4× a fresh store's. Built concurrently on Postgres: a store
 * upgraded from before it may hold millions of cases, written to while it builds.
 */
export const casesStatus: ConcurrentIndex = { name: 'cases_status_id', table: 'cases', columns: ['status', 'id'] };

export const { up, down } = concurrentIndexMigration(casesStatus);
