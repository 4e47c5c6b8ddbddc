import type { ConnectionSmokeTestInput, SmokeTestOutcome } from '../../connections/types.js';
import { workflowContract } from './contract.js';

/** One smoke test of a connection, awaited by the API (workflows/connection-smoke-test.ts). */
export const connectionSmokeTestContract =
  workflowContract<(input: ConnectionSmokeTestInput) => Promise<SmokeTestOutcome>>('connectionSmokeTest');

export function connectionSmokeTestWorkflowId(connectionId: string): string {
  return `connection-smoke-${connectionId}`;
}
