import { WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';

/**
 * Asks a run to cancel; false when it is not running (closed or unknown to
 * Temporal). Temporal accepts a cancel request for a closed run without
 * error, so it asks first.
 */
export async function cancelIfRunning(handle: WorkflowHandle): Promise<boolean> {
  try {
    if ((await handle.describe()).status.name !== 'RUNNING') return false;
    await handle.cancel();
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}
