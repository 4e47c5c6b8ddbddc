import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { loadConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/logging/logger.js';
import { temporalCliPath } from '../../src/temporal/binaries.js';
import { devServerEngine, startDevServer } from '../../src/temporal/dev-server.js';
import { freePort } from '../../src/net/free-port.js';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    /** Its process (test/foundation/dev-server-flags.test.ts reads its flags). */
    temporalPid: number;
  }
}

/**
 * One real Temporal dev server for the whole run (in memory, headless). It is
 * started here rather than with TestWorkflowEnvironment.createLocal because
 * that gives the server only 5 s, too little on two busy cores.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'caseflow-temporal-'));
  const server = await startDevServer({
    cliPath: temporalCliPath(process.env.TEMPORAL_CLI_PATH),
    dataDir,
    port: await freePort(),
    uiPort: 0,
    ui: false,
    namespace: 'default',
    startTimeoutMs: 90_000,
    logger: createLogger('warn'),
    // The engine as the service runs its embedded server by default (config/default.json, temporal.devServer).
    ...devServerEngine(loadConfig({}).temporal.devServer),
  });
  project.provide('temporalAddress', server.address);
  project.provide('temporalPid', server.pid);
  return async () => {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
}
