import path from 'node:path';
import { existsSync } from 'node:fs';
import { Worker, type ActivityInterceptorsFactory, type WorkerOptions as WorkerOptionsOfSdk } from '@temporalio/worker';
import { projectRoot } from '../config/paths.js';
import type { TemporalHandle } from './connection.js';
import { encryptingDataConverter } from './data-converter.js';
import { createActivities } from '../../activities/index.js';
import type { ActivityDeps } from '../../activities/deps.js';

export const workflowBundlePath = path.join(projectRoot, 'dist', 'workflow-bundle.js');

export interface WorkerOptions {
  maxCachedWorkflows: number;
  /** maxConcurrentWorkflowTaskExecutions (config temporal.workflowTaskSlots). */
  workflowTaskSlots: number;
  /** How long in-flight tasks may finish after a stop begins before their activities are cancelled. */
  shutdownGraceMs?: number;
  /** Overrides the configured task queue (tests run one queue per test file). */
  taskQueue?: string;
  /** Tracing's activity interceptors and workflow span sink (src/tracing), when it is on. */
  tracing?: Pick<WorkerOptionsOfSdk, 'interceptors' | 'sinks'>;
  /** Activity interceptors of our own (metrics), after tracing's. */
  activityInterceptors?: ActivityInterceptorsFactory[];
}

/** A worker over the prebuilt workflow bundle and every activity. */
export async function createWorker(
  temporal: TemporalHandle,
  deps: ActivityDeps,
  options: WorkerOptions,
): Promise<Worker> {
  if (!existsSync(workflowBundlePath)) {
    throw new Error(`workflow bundle missing at ${workflowBundlePath}: run \`npm run build\``);
  }
  return Worker.create({
    connection: temporal.connection,
    namespace: temporal.namespace,
    taskQueue: options.taskQueue ?? temporal.taskQueue,
    workflowBundle: { codePath: workflowBundlePath },
    activities: createActivities(deps),
    dataConverter: encryptingDataConverter(temporal.codec),
    // Set explicitly: the automatic value has caused OOMs (sdk-typescript#2227).
    maxCachedWorkflows: options.maxCachedWorkflows,
    maxConcurrentWorkflowTaskExecutions: options.workflowTaskSlots,
    shutdownGraceTime: options.shutdownGraceMs ?? 0,
    ...options.tracing,
    interceptors: {
      ...options.tracing?.interceptors,
      activity: [...(options.tracing?.interceptors?.activity ?? []), ...(options.activityInterceptors ?? [])],
    },
  });
}
