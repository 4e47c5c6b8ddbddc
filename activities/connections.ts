import { ConnectionRuntime } from '../src/connections/connection-runtime.js';
import { CredentialVault } from '../src/connections/credential-vault.js';
import type { ConnectionActivities } from '../src/connections/types.js';
import { secretBoxFromConfig } from '../src/crypto/secret-box.js';
import { Outbound } from '../src/net/outbound.js';
import { CatalogRepo } from '../src/store/catalog-repo.js';
import { ConnectionRepo } from '../src/store/connection-repo.js';
import type { ActivityDeps } from './deps.js';

/** The worker's ConnectionRuntime: credentials are decrypted here, in the activity, and nowhere else. */
export function createConnectionRuntime(deps: ActivityDeps): ConnectionRuntime {
  return new ConnectionRuntime({
    connections: new ConnectionRepo(deps.db),
    catalog: new CatalogRepo(deps.db),
    vault: new CredentialVault(secretBoxFromConfig(deps.config)),
    outbound: new Outbound({ allowCidrs: deps.config.outbound.allowCidrs }),
    python: deps.python,
    smokeTestTimeoutMs: deps.config.connections.smokeTestTimeoutMs,
  });
}

export function createConnectionActivities(deps: ActivityDeps): ConnectionActivities {
  const runtime = createConnectionRuntime(deps);
  return {
    smokeTestConnection: (input) => runtime.smokeTest(input.connectionId, input.testInputData),
  };
}
