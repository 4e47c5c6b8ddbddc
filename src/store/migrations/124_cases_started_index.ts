import { concurrentIndexMigration, type ConcurrentIndex } from './concurrent-index.js';

/**
 * Cases by when their run started: the fair share (src/cases/admission) asks on each execute which
 * organizations started a case within the last seconds. Without it that reads the whole table. Built
 * concurrently on Postgres, as 112.
 */
export const casesStarted: ConcurrentIndex = { name: 'cases_started', table: 'cases', columns: ['started_at'] };

export const { up, down } = concurrentIndexMigration(casesStarted);
