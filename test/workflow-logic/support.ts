import { randomUUID } from 'node:crypto';
import { Context } from '@temporalio/activity';
import type { WorkflowHandle } from '@temporalio/client';
import type { Workflow, WorkflowResultType } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { temporalTestServerPath } from '../../src/temporal/binaries.js';
import { workflowBundlePath } from '../../src/temporal/worker.js';

/**
 * Workflow-logic tests: the real workflow code (the prebuilt bundle, so
 * `npm run build` first) over mocked activities, on Temporal's time-skipping
 * test server. Timers fire as soon as nothing else can happen, so hours of
 * workflow time take milliseconds; no store, Python or HTTP is involved.
 *
 * The server skips no time while an activity is outstanding (it counts as
 * work in progress), so a wait is tested where the workflow sleeps or the
 * server backs off a retry, never inside an activity that hangs.
 */
export async function timeSkippingEnvironment(): Promise<TestWorkflowEnvironment> {
  const executable = temporalTestServerPath();
  if (!executable) throw new Error('temporal-test-server not installed (.venv): run npm ci');
  // Mocks fail activities on purpose, and the test server lacks newer capabilities: the SDK's warnings would drown the output.
  Runtime.install({
    logger: new DefaultLogger('ERROR'),
    telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' } } },
  });
  return TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: executable } },
  });
}

/** How a run ended, in workflow time, and what it waited on. */
export interface WorkflowRun<W extends Workflow> {
  result?: WorkflowResultType<W>;
  /** The run's failure (a WorkflowFailedError) when it did not complete. */
  err?: unknown;
  /** From start to close, on the server's clock (which skips). */
  workflowMs: number;
  /** Real time the test spent, worker start and stop included. */
  wallMs: number;
  /** Each timer the workflow started, in the order it started them (ms). */
  timers: number[];
}

/**
 * Runs one workflow to its end on a worker over the bundle and `activities`
 * (the mocks), on a task queue of its own: `start` starts it there (typed by
 * the workflow function), `whileRunning` acts on it (signal, cancel, wait for
 * mock calls) before its result is awaited.
 */
export async function runWorkflow<W extends Workflow>(
  env: TestWorkflowEnvironment,
  activities: object,
  start: (taskQueue: string) => Promise<WorkflowHandle<W>>,
  whileRunning?: (handle: WorkflowHandle<W>) => Promise<void>,
): Promise<WorkflowRun<W>> {
  const wallStart = Date.now();
  const taskQueue = `workflow-logic-${randomUUID()}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: { codePath: workflowBundlePath },
    activities,
    // A mock still hanging when the run is over is cancelled after this (see hangUntilCancelled).
    shutdownGraceTime: '1s',
  });
  const run = await worker.runUntil(async () => {
    const handle = await start(taskQueue);
    await whileRunning?.(handle);
    const outcome = await handle.result().then(
      (result) => ({ result }),
      (err: unknown) => ({ err }),
    );
    const { startTime, closeTime } = await handle.describe();
    const { events } = await handle.fetchHistory();
    const timers = (events ?? []).flatMap((e) => {
      const timeout = e.timerStartedEventAttributes?.startToFireTimeout;
      return timeout ? [Number(timeout.seconds ?? 0) * 1000 + Math.round((timeout.nanos ?? 0) / 1e6)] : [];
    });
    return { ...outcome, timers, workflowMs: (closeTime?.getTime() ?? NaN) - startTime.getTime() };
  });
  return { ...run, wallMs: Date.now() - wallStart };
}

/**
 * When the server scheduled the running activity, in workflow time (the
 * server's clock, which skips): how a mock tells the delays between calls.
 */
export function scheduledAt(): number {
  return Context.current().info.currentAttemptScheduledTimestampMs;
}

/**
 * An activity that never finishes by itself: it heartbeats (so the server's
 * cancel reaches it) and ends when cancelled, by the workflow or by the
 * worker's shutdown.
 */
export async function hangUntilCancelled(): Promise<never> {
  const context = Context.current();
  const beat = setInterval(() => context.heartbeat(), 200);
  try {
    return await context.cancelled;
  } finally {
    clearInterval(beat);
  }
}

/** Polls (every 10 ms, real time) until `condition` holds. */
export async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 10));
}
