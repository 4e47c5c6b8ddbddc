import { setTimeout as delay } from 'node:timers/promises';
import { startDevServer, type DevServer, type DevServerOptions } from './dev-server.js';
import type { EngineHealth } from './engine-health.js';

export interface RestartPolicy {
  /** Restarts allowed within `windowMs`; one more and the engine is given up as failed. */
  maxRestarts: number;
  windowMs: number;
  /** First wait before a restart, doubled after each failed attempt up to `maxBackoffMs`. */
  initialBackoffMs: number;
  maxBackoffMs: number;
}

export interface SupervisedDevServer {
  address: string;
  uiUrl?: string;
  /** The running server's pid (changes with each restart). */
  pid(): number;
  stop(): Promise<void>;
}

/**
 * The embedded Temporal dev server, started again on the same database when it
 * dies by itself. The worker and the client share one NativeConnection that
 * reconnects to the same address on its own, so runs accepted before the fault
 * carry on after it. Past `maxRestarts` in `windowMs` the engine is marked
 * failed, which fails liveness so the process supervisor restarts everything.
 */
export async function superviseDevServer(
  options: DevServerOptions,
  policy: RestartPolicy,
  health: EngineHealth,
): Promise<SupervisedDevServer> {
  const log = options.logger.child({ component: 'temporal-supervisor' });
  let server: DevServer = await startDevServer(options);
  let stopping = false;
  // Read through a call: the stop arrives from another task, which narrowing cannot see.
  const stopRequested = () => stopping;
  const restartTimes: number[] = [];

  const restart = async (): Promise<void> => {
    let backoff = policy.initialBackoffMs;
    while (!stopRequested()) {
      const now = Date.now();
      while (restartTimes.length > 0 && (restartTimes[0] ?? 0) <= now - policy.windowMs) restartTimes.shift();
      if (restartTimes.length >= policy.maxRestarts) {
        const reason = `the embedded Temporal server died ${restartTimes.length + 1} times within ${policy.windowMs} ms`;
        log.fatal({ restarts: restartTimes.length }, `${reason}; giving up (liveness now fails)`);
        health.markFailed(reason);
        return;
      }
      await delay(backoff);
      if (stopRequested()) return;
      restartTimes.push(Date.now());
      health.countRestart();
      try {
        server = await startDevServer(options);
        if (stopRequested()) {
          await server.stop();
          return;
        }
        log.warn({ pid: server.pid, attempt: restartTimes.length }, 'temporal dev server started again');
        health.markUp();
        watch(server);
        return;
      } catch (err) {
        log.error({ err }, 'temporal dev server did not start again');
        backoff = Math.min(backoff * 2, policy.maxBackoffMs);
      }
    }
  };

  const watch = (watched: DevServer): void => {
    void watched.exited.then((exit) => {
      if (exit.stopped || stopRequested()) return;
      health.markDown(`the embedded Temporal server exited (code ${exit.code}, signal ${exit.signal})`);
      void restart();
    });
  };
  watch(server);

  return {
    address: server.address,
    uiUrl: server.uiUrl,
    pid: () => server.pid,
    stop: async () => {
      stopping = true;
      await server.stop();
    },
  };
}
