import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, inject } from 'vitest';
import { projectRoot } from '../../src/config/paths.js';
import { startTestService, type TestService } from './harness.js';

/** Resolves once the child has exited (at once when it has already). */
export function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) =>
    child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve()),
  );
}

/**
 * Workers in their own processes (the built CLI), sharing the SQLite file and
 * the task queue of an API-only test service: tests kill them with SIGKILL.
 */
export class WorkerProcesses {
  private readonly workers: ChildProcess[] = [];

  constructor(private readonly svc: () => TestService) {}

  /** A worker; `nodeArgs` go to node before the CLI (a module to preload). */
  start(nodeArgs: string[] = []): ChildProcess {
    const { dataDir, taskQueue, config } = this.svc();
    const child = spawn(
      process.execPath,
      [...nodeArgs, path.join(projectRoot, 'dist/src/cli/main.js'), 'serve', '--role', 'worker'],
      {
        env: {
          ...process.env,
          TEMPORAL_ADDRESS: inject('temporalAddress'),
          CASEFLOW_DATA_DIR: dataDir,
          ...(config.databaseUrl ? { DATABASE_URL: config.databaseUrl } : {}),
          CASEFLOW_TASK_QUEUE: taskQueue,
          CASEFLOW_WORKER_METRICS_PORT: '0',
          LOG_LEVEL: 'warn',
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    );
    this.workers.push(child);
    return child;
  }

  /** Kills `child` with SIGKILL (a crash: no drain), waits for it to exit and starts another worker. */
  async crashAndReplace(child: ChildProcess): Promise<ChildProcess> {
    child.kill('SIGKILL');
    await exited(child);
    return this.start();
  }

  /** Stops the workers still running (SIGTERM), waiting for each. */
  async stopAll(): Promise<void> {
    for (const w of this.workers) {
      if (w.exitCode === null && w.signalCode === null) {
        w.kill('SIGTERM');
        await exited(w);
      }
    }
  }
}

/**
 * For a test file whose worker it kills: an API-only service started before its tests (`service()`), and
 * workers in their own processes over it, stopped with the service after them.
 */
export function apiServiceWithWorkerProcesses(): { service: () => TestService; workers: WorkerProcesses } {
  let svc: TestService | undefined;
  const service = () => {
    if (!svc) throw new Error('the service starts in beforeAll');
    return svc;
  };
  const workers = new WorkerProcesses(service);
  beforeAll(async () => {
    svc = await startTestService({ role: 'api' });
  });
  afterAll(async () => {
    await workers.stopAll();
    await svc?.stop();
  });
  return { service, workers };
}
