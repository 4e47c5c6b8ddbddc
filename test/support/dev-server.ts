import path from 'node:path';
import { createLogger } from '../../src/logging/logger.js';
import { freePort } from '../../src/net/free-port.js';
import { temporalCliPath } from '../../src/temporal/binaries.js';
import type { DevServerOptions } from '../../src/temporal/dev-server.js';

/** A headless dev server on a free port with its SQLite file in `dataDir`: what a test adds its settings to. */
export async function headlessDevServer(dataDir: string): Promise<DevServerOptions> {
  return {
    cliPath: temporalCliPath(process.env.TEMPORAL_CLI_PATH),
    dataDir,
    dbFilename: path.join(dataDir, 'temporal.db'),
    port: await freePort(),
    uiPort: 0,
    ui: false,
    namespace: 'default',
    startTimeoutMs: 90_000,
    logger: createLogger('warn'),
  };
}
