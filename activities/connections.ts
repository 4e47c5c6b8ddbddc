import type { ConnectionActivities } from '../src/temporal/contracts/connection-smoke-test.js';
import type { ActivityDeps } from './deps.js';

export function createConnectionActivities({ services }: ActivityDeps): ConnectionActivities {
  const runtime = services.connectionRuntime;
  return {
    smokeTestConnection: (input) => runtime.smokeTest(input.connectionId, input.testInputData),
  };
}
