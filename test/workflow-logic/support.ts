import { randomUUID } from 'node:crypto';
import { Context } from '@temporalio/activity';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { Workflow, WorkflowResultType } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { temporalTestServerPath } from '../../src/temporal/binaries.js';
import { workflowBundlePath } from '../../src/temporal/worker.js';

/** How a run ended, in workflow time, and what it waited on. */
export interface WorkflowRun<W extends Workflow> {
  result?: WorkflowResultType<W>;
  /** The run's failure (a WorkflowFailedError) when it did not complete. */
  err?: unknown;
  /** From start to close, on the server's clock (which skips). */
  workflowMs: number;
  /** Real time the run took. */
  wallMs: number;
  /** Each timer the workflow started, in the order it started them (ms). */
  timers: number[];
}

type Mocks<M> = { [K in keyof M]: (...args: never[]) => Promise<unknown> };

/**
 * Workflow-logic tests: the real workflow code (the prebuilt bundle, so
 * `npm run build` first) over mocked activities, on Temporal's time-skipping
 * test server. Timers fire as soon as nothing else can happen, so hours of
 * workflow time take milliseconds; no store, Python or HTTP is involved.
 *
 * The server skips no time while an activity is outstanding (it counts as
 * work in progress), so a wait is tested where the workflow sleeps or the
 * server backs off a retry, never inside an activity that hangs.
 *
 * One server and one worker per test file (loading the bundle takes about a
 * second); each run names the mocks its activities call.
 */
export class WorkflowLogic<M extends Mocks<M>> {
  private readonly running: Promise<void>;

  private constructor(
    private readonly env: TestWorkflowEnvironment,
    private readonly worker: Worker,
    private readonly taskQueue: string,
    /** What the worker's activities call: the current run's mocks. */
    private readonly current: { mocks?: M },
  ) {
    this.running = worker.run();
  }

  /** The server and a worker whose activities `names` call the current run's mocks. */
  static async start<M extends Mocks<M>>(names: ReadonlyArray<keyof M & string>): Promise<WorkflowLogic<M>> {
    const executable = temporalTestServerPath();
    if (!executable) throw new Error('temporal-test-server not installed (.venv): run npm ci');
    // Mocks fail activities on purpose, and the test server lacks newer capabilities: the SDK's warnings would drown the output.
    Runtime.install({
      logger: new DefaultLogger('ERROR'),
      telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' } } },
    });
    const env = await TestWorkflowEnvironment.createTimeSkipping({
      server: { executable: { type: 'existing-path', path: executable } },
    });
    const taskQueue = `workflow-logic-${randomUUID()}`;
    const current: { mocks?: M } = {};
    const activities = Object.fromEntries(
      names.map((name) => [
        name,
        (...args: never[]) => {
          const mock = current.mocks?.[name];
          if (!mock) throw new Error(`no mock for activity ${name}`);
          return mock(...args);
        },
      ]),
    );
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: { codePath: workflowBundlePath },
      activities,
      // A mock still hanging when the file is done is cancelled after this (see hangUntilCancelled).
      shutdownGraceTime: '1s',
    });
    return new WorkflowLogic(env, worker, taskQueue, current);
  }

  /**
   * Runs one workflow to its end over `mocks`: `start` starts it on the
   * worker's task queue (typed by the workflow function), `whileRunning`
   * acts on it (signal, cancel, wait for mock calls) before its result is
   * awaited.
   */
  async run<W extends Workflow>(
    mocks: M,
    start: (client: Client, taskQueue: string) => Promise<WorkflowHandle<W>>,
    whileRunning?: (handle: WorkflowHandle<W>) => Promise<void>,
  ): Promise<WorkflowRun<W>> {
    const wallStart = Date.now();
    this.current.mocks = mocks;
    const handle = await start(this.env.client, this.taskQueue);
    await whileRunning?.(handle);
    const outcome = await handle.result().then(
      (result) => ({ result }),
      (err: unknown) => ({ err }),
    );
    const wallMs = Date.now() - wallStart;
    const { startTime, closeTime } = await handle.describe();
    const { events } = await handle.fetchHistory();
    const timers = (events ?? []).flatMap((e) => {
      const timeout = e.timerStartedEventAttributes?.startToFireTimeout;
      return timeout ? [Number(timeout.seconds ?? 0) * 1000 + Math.round((timeout.nanos ?? 0) / 1e6)] : [];
    });
    return { ...outcome, wallMs, timers, workflowMs: (closeTime?.getTime() ?? NaN) - startTime.getTime() };
  }

  /** Moves the server's clock on by `ms` (timers due meanwhile fire), while the test acts on a running workflow. */
  async skip(ms: number): Promise<void> {
    await this.env.sleep(ms);
  }

  async stop(): Promise<void> {
    this.worker.shutdown();
    await this.running;
    await this.env.teardown();
  }
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

const { EventType } = temporal.api.enums.v1;
type EventKind = temporal.api.enums.v1.EventType | null | undefined;
const activityClosed = new Set<EventKind>([
  EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED,
  EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED,
  EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT,
  EventType.EVENT_TYPE_ACTIVITY_TASK_CANCELED,
]);

/**
 * Polls the history (every 10 ms, real time) until the workflow has taken the result of every
 * activity it scheduled: each one closed, and a workflow task completed after the last close. A
 * cancel sent before then can reach the workflow in the same task as an activity's completion; its
 * request to cancel that activity is one the time-skipping server refuses (ACTIVITY_UNKNOWN) and
 * never hands back, so the run hangs (sdk-typescript#1058; the real server takes it).
 */
export async function untilActivitiesTaken(handle: WorkflowHandle): Promise<void> {
  for (;;) {
    const kinds: EventKind[] = ((await handle.fetchHistory()).events ?? []).map((e) => e.eventType);
    const scheduled = kinds.filter((k) => k === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED).length;
    const closed = kinds.filter((k) => activityClosed.has(k)).length;
    const lastClose = kinds.findLastIndex((k) => activityClosed.has(k));
    const taken = kinds.indexOf(EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED, lastClose) > lastClose;
    if (scheduled > 0 && closed === scheduled && taken) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
