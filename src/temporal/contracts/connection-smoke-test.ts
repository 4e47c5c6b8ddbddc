import type { SmokeTestOutcome } from '../../domain/connections.js';
import { workflowContract } from './contract.js';

/** What the smoke-test activity is given: ids and test inputs, never a secret. */
export interface SmokeTestInput {
  connectionId: string;
  testInputData?: Record<string, unknown>;
}

/** The smoke-test workflow's input: the activity's start-to-close timeout with it. */
export interface ConnectionSmokeTestInput extends SmokeTestInput {
  timeoutMs: number;
}

/** The activities of connections (implemented in activities/connections.ts). */
export interface ConnectionActivities {
  smokeTestConnection(input: SmokeTestInput): Promise<SmokeTestOutcome>;
}

/** One smoke test of a connection, awaited by the API (workflows/connection-smoke-test.ts). */
export const connectionSmokeTestContract =
  workflowContract<(input: ConnectionSmokeTestInput) => Promise<SmokeTestOutcome>>('connectionSmokeTest');

export function connectionSmokeTestWorkflowId(connectionId: string): string {
  return `connection-smoke-${connectionId}`;
}
