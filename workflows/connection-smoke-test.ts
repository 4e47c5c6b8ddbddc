import { proxyActivities } from '@temporalio/workflow';
import type { ConnectionActivities, ConnectionSmokeTestInput, SmokeTestOutcome } from '../src/connections/types.js';

/**
 * One smoke test of a new connection, as an activity with a timeout. Not
 * retried: the endpoint's first answer is the test's result.
 */
export async function connectionSmokeTest(input: ConnectionSmokeTestInput): Promise<SmokeTestOutcome> {
  const { smokeTestConnection } = proxyActivities<ConnectionActivities>({
    startToCloseTimeout: input.timeoutMs,
    retry: { maximumAttempts: 1 },
  });
  return smokeTestConnection({ connectionId: input.connectionId, testInputData: input.testInputData });
}
