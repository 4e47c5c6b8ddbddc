import { setTimeout as delay } from 'node:timers/promises';
import type { Worker } from '@temporalio/worker';
import type { Logger } from '../logging/logger.js';

/** What supervision needs of a worker. */
export type RunnableWorker = Pick<Worker, 'run' | 'shutdown' | 'getState'>;

export interface SupervisedWorker<W extends RunnableWorker = Worker> {
  /** The worker running now. */
  current(): W;
  /** Drains the running worker (in-flight tasks get the worker's shutdown grace) and starts no other. */
  stop(): Promise<void>;
}

const maxBackoffMs = 30_000;

/**
 * Runs a worker and replaces it when it fails (for example after its polls
 * failed for longer than the SDK tolerates while the engine was gone), so a
 * fault of the engine never leaves the process without a worker. The first
 * worker is created before this returns: a worker that cannot start at all
 * fails the start of the process, as before.
 */
export async function superviseWorker<W extends RunnableWorker>(
  create: () => Promise<W>,
  logger: Logger,
  options: { initialBackoffMs?: number } = {},
): Promise<SupervisedWorker<W>> {
  const log = logger.child({ component: 'worker-supervisor' });
  let worker = await create();
  let stopping = false;
  // Read through a call: the stop arrives from another task, which narrowing cannot see.
  const stopRequested = () => stopping;
  let running = worker.run();

  const keepRunning = async (): Promise<void> => {
    const initialBackoffMs = options.initialBackoffMs ?? 500;
    let backoff = initialBackoffMs;
    while (!stopRequested()) {
      try {
        await running;
        if (stopRequested()) return;
        log.error('the Temporal worker stopped by itself; starting a new one');
      } catch (err) {
        if (stopRequested()) return;
        log.error({ err }, 'the Temporal worker failed; starting a new one');
      }
      await delay(backoff);
      if (stopRequested()) return;
      try {
        worker = await create();
        running = worker.run();
        backoff = initialBackoffMs;
        if (stopRequested()) worker.shutdown(); // stop() began while it was being created
      } catch (err) {
        log.error({ err }, 'could not create a new Temporal worker');
        backoff = Math.min(backoff * 2, maxBackoffMs);
        running = Promise.reject(err instanceof Error ? err : new Error(String(err)));
      }
    }
  };
  const supervision = keepRunning();

  return {
    current: () => worker,
    stop: async () => {
      stopping = true;
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running.catch((err: unknown) =>
        log.warn({ err }, 'the Temporal worker ended with an error while stopping'),
      );
      await supervision;
    },
  };
}
