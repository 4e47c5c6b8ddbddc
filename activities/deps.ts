import type { Config } from '../src/config/config.js';
import type { Logger } from '../src/logging/logger.js';
import type { Db } from '../src/store/database.js';
import type { PythonRunnerPool } from '../src/python/pool.js';

/** What activities get from the process that hosts the worker. */
export interface ActivityDeps {
  config: Config;
  db: Db;
  logger: Logger;
  python: PythonRunnerPool;
}
