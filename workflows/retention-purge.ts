import { proxyActivities } from '@temporalio/workflow';
import type { RetentionActivities } from '../activities/retention.js';
import type { WorkflowOf } from '../src/temporal/contracts/contract.js';
import type { retentionPurgeContract } from '../src/temporal/contracts/retention-purge.js';

const { purgeRetentionBatch, reclaimStoreSpace } = proxyActivities<RetentionActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes', maximumAttempts: 10 },
});

/** Batches per run: a backlog larger than this goes on at the next scheduled run, keeping the history short. */
const MAX_BATCHES = 500;

/**
 * Erases the cases past their organization's retention period in small
 * batches (each its own activity and transaction, so new cases keep being
 * written in between), then gives the freed space back (SQLite).
 */
export const retentionPurge: WorkflowOf<typeof retentionPurgeContract> = async function retentionPurge() {
  let casesErased = 0;
  let rowsDeleted = 0;
  for (let batch = 0; batch < MAX_BATCHES; batch += 1) {
    const erased = await purgeRetentionBatch();
    casesErased += erased.cases;
    rowsDeleted += erased.rows;
    if (!erased.more) break;
  }
  const { bytesReclaimed } = await reclaimStoreSpace();
  return { casesErased, rowsDeleted, bytesReclaimed };
};
