import type { NativeConnection } from '@temporalio/worker';

/**
 * - `up`: the engine answered its last check;
 * - `down`: it did not (or the embedded server died) and is expected back;
 * - `failed`: the embedded server could not be brought back: only a restart of the process can help.
 */
export type EngineState = 'up' | 'down' | 'failed';

export interface EngineStatus {
  state: EngineState;
  /** When the state last changed. */
  since: Date;
  /** Why it is not up, for logs and the operator (never shown to tenants). */
  reason?: string;
  /** Times the embedded server was started again after dying. */
  restarts: number;
}

/**
 * What this process knows of its workflow engine, so readiness, liveness and
 * execute answer at once instead of waiting on an unreachable server. The
 * embedded server's supervisor and the probe report here.
 */
export class EngineHealth {
  private status: EngineStatus = { state: 'up', since: new Date(), restarts: 0 };
  private readonly upListeners: Array<() => void> = [];

  current(): EngineStatus {
    return { ...this.status };
  }

  isUp(): boolean {
    return this.status.state === 'up';
  }

  markUp(): void {
    if (this.status.state === 'up' || this.status.state === 'failed') return;
    this.status = { state: 'up', since: new Date(), restarts: this.status.restarts };
    for (const listener of this.upListeners) listener();
  }

  markDown(reason: string): void {
    if (this.status.state !== 'up') return;
    this.status = { state: 'down', since: new Date(), reason, restarts: this.status.restarts };
  }

  /** Final: the process must be restarted (liveness fails from now on). */
  markFailed(reason: string): void {
    this.status = { state: 'failed', since: new Date(), reason, restarts: this.status.restarts };
  }

  countRestart(): void {
    this.status = { ...this.status, restarts: this.status.restarts + 1 };
  }

  /** Called each time the engine comes back. */
  onUp(listener: () => void): void {
    this.upListeners.push(listener);
  }
}

/** A call that had no answer in time (its receiver may still have received it). */
export class NoAnswerInTimeError extends Error {}

/** Rejects after `ms` when `work` has not settled: a gRPC deadline alone does not bound the native client's reconnects. */
export function within<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new NoAnswerInTimeError(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** What sets a gRPC deadline on the calls made in it: a Client or a NativeConnection. */
interface DeadlineScope {
  withDeadline<R>(deadline: number, fn: () => Promise<R>): Promise<R>;
}

/** A call to Temporal bounded twice: its gRPC deadline, and `within`'s timer (the deadline alone is not enough). */
export function boundedCall<T>(scope: DeadlineScope, ms: number, what: string, call: () => Promise<T>): Promise<T> {
  return within(ms, what, scope.withDeadline(Date.now() + ms, call));
}

/** One bounded round trip to the engine. */
export function pingEngine(connection: NativeConnection, timeoutMs: number): Promise<void> {
  return boundedCall(connection, timeoutMs, 'the workflow engine', () =>
    connection.workflowService.getSystemInfo({}),
  ).then(() => undefined);
}

/**
 * Checks the engine every `intervalMs` while it is up and every second while it is
 * not, so a recovery is noticed within about a second. Returns the stop function.
 */
export function startEngineProbe(
  connection: NativeConnection,
  health: EngineHealth,
  options: { intervalMs: number; timeoutMs: number },
): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const tick = async () => {
    try {
      await pingEngine(connection, options.timeoutMs);
      health.markUp();
    } catch (err) {
      health.markDown(err instanceof Error ? err.message : String(err));
    }
    if (stopped) return;
    timer = setTimeout(() => void tick(), health.isUp() ? options.intervalMs : 1000);
    timer.unref();
  };
  timer = setTimeout(() => void tick(), options.intervalMs);
  timer.unref();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
