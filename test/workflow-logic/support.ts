import { randomUUID } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { temporalTestServerPath } from '../../src/temporal/binaries.js';
import { workflowBundlePath } from '../../src/temporal/worker.js';

/**
 * Workflow-logic tests: the real workflow code (the prebuilt bundle, so
 * `npm run build` first) over mocked activities, on Temporal's time-skipping
 * test server. Timers fire as soon as nothing else can happen, so hours of
 * workflow time take milliseconds; no store, Python or HTTP is involved.
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

/** Runs `body` while a worker over the workflow bundle and `activities` (the mocks) serves a task queue of its own. */
export async function withWorker<T>(
  env: TestWorkflowEnvironment,
  activities: object,
  body: (taskQueue: string) => Promise<T>,
): Promise<T> {
  const taskQueue = `workflow-logic-${randomUUID()}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: { codePath: workflowBundlePath },
    activities,
    // A mock still hanging when the test is done is cancelled after this (see hangUntilCancelled).
    shutdownGraceTime: '1s',
  });
  return worker.runUntil(() => body(taskQueue));
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
