import { concurrentIndexMigration, type ConcurrentIndex } from './concurrent-index.js';

/**
 * Pending deliveries by when their next attempt is due: the delivery sweep (src/callbacks/delivery-sweep.ts) asks
 * every minute for those overdue, oldest first. Without it that reads every delivery ever made. Built concurrently
 * on Postgres: the table holds one row per callback and event ever sent.
 */
export const callbackDeliveriesDue: ConcurrentIndex = {
  name: 'callback_deliveries_status_due',
  table: 'callback_deliveries',
  columns: ['status', 'next_attempt_at', 'id'],
};

export const { up, down } = concurrentIndexMigration(callbackDeliveriesDue);
