import path from 'node:path';
import type { ClientInterceptors } from '@temporalio/client';
import type { WorkerOptions } from '@temporalio/worker';
import { projectRoot } from '../config/paths.js';
import type { TracingSettings } from './settings.js';

/** The workflow side's interceptors, compiled; the bundle takes them by path (scripts/bundle-workflows.ts). */
export const workflowTracingPath = path.join(projectRoot, 'dist', 'src', 'tracing', 'workflow-interceptors.cjs');

/** The process's tracing: what Temporal's client and worker get, and the flush at stop. */
export interface Tracing {
  readonly enabled: boolean;
  /** A workflow started (or signalled) by the client carries the active span to its run. */
  readonly clientInterceptors: ClientInterceptors;
  /** Activities continue their workflow's trace; workflow spans leave the sandbox through a sink. */
  readonly workerOptions: Pick<WorkerOptions, 'interceptors' | 'sinks'>;
  /** Sends the spans still buffered and unregisters the global provider. */
  shutdown(): Promise<void>;
}

/** Off: no SDK loaded, nothing registered; the API's calls are OpenTelemetry's no-ops. */
export const noTracing: Tracing = {
  enabled: false,
  clientInterceptors: {},
  workerOptions: {},
  shutdown: () => Promise.resolve(),
};

/** Loads and registers the SDK only when the settings turn tracing on (settings.ts). */
export async function startTracing(settings: TracingSettings | undefined): Promise<Tracing> {
  if (!settings) return noTracing;
  const { openTelemetry } = await import('./sdk.js');
  return openTelemetry(settings);
}
