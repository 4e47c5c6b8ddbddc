import type { Config } from './config/config.js';
import type { Logger } from './logging/logger.js';
import type { Metrics } from './metrics/metrics.js';
import type { Store } from './store/database.js';
import type { TenancyRepo } from './store/tenancy-repo.js';
import type { TemporalHandle } from './temporal/connection.js';
import type { PythonRunnerPool } from './python/pool.js';

/** What the API's routers are built over; one per process. */
export interface AppContext {
  config: Config;
  logger: Logger;
  store: Store;
  tenancy: TenancyRepo;
  temporal: TemporalHandle;
  metrics: Metrics;
  /** Sandboxed Python: the authoring scan on the API side, node code on the worker side. */
  python: PythonRunnerPool;
}
