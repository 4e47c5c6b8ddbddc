import type { Logger } from '../logging/logger.js';
import type { ConnectionRepo } from '../store/connection-repo.js';
import type { TemporalHandle } from '../temporal/connection.js';
import type { SmokeTestRunner } from './connection-service.js';
import {
  connectionSmokeTestContract,
  connectionSmokeTestWorkflowId,
} from '../temporal/contracts/connection-smoke-test.js';
import type { WorkflowOf } from '../temporal/contracts/contract.js';

/** Room beyond the HTTP timeout for the activity to load, decrypt and record. */
const ACTIVITY_MARGIN_MS = 5_000;
/** Room beyond the activity for scheduling (a busy worker). */
const WORKFLOW_MARGIN_MS = 25_000;

/**
 * Smoke tests run as a Temporal workflow with one activity (the worker holds
 * the key ring and the outbound policy); the API waits for its outcome. Only
 * ids and test inputs enter history. A test that does not finish (timeout,
 * Temporal unavailable) is a failed test, recorded as such.
 */
export function temporalSmokeTests(
  temporal: TemporalHandle,
  repo: ConnectionRepo,
  logger: Logger,
  httpTimeoutMs: number,
): SmokeTestRunner {
  return async (connectionId, testInputData) => {
    const timeoutMs = httpTimeoutMs + ACTIVITY_MARGIN_MS;
    try {
      return await temporal.client.workflow.execute<WorkflowOf<typeof connectionSmokeTestContract>>(
        connectionSmokeTestContract.workflowType,
        {
          taskQueue: temporal.taskQueue,
          workflowId: connectionSmokeTestWorkflowId(connectionId),
          workflowExecutionTimeout: timeoutMs + WORKFLOW_MARGIN_MS,
          args: [{ connectionId, testInputData, timeoutMs }],
        },
      );
    } catch (err) {
      logger.warn({ err, connectionId }, 'connection smoke test did not finish');
      const outcome = { testPassed: false, testError: 'The smoke test did not finish in time' };
      await repo.recordTest(connectionId, outcome);
      return outcome;
    }
  };
}
