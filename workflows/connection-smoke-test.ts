import { proxyActivities } from '@temporalio/workflow';
import type {
  ConnectionActivities,
  connectionSmokeTestContract,
} from '../src/temporal/contracts/connection-smoke-test.js';
import type { WorkflowOf } from '../src/temporal/contracts/contract.js';

/**
 * One smoke test of a new connection, as an activity with a timeout. Not
 * retried: the endpoint's first answer is the test's result.
 */
export const connectionSmokeTest: WorkflowOf<typeof connectionSmokeTestContract> = async function connectionSmokeTest(
  input,
) {
  const { smokeTestConnection } = proxyActivities<ConnectionActivities>({
    startToCloseTimeout: input.timeoutMs,
    retry: { maximumAttempts: 1 },
  });
  return smokeTestConnection({ connectionId: input.connectionId, testInputData: input.testInputData });
};
