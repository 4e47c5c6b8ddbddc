import path from 'node:path';
import type * as OtelApi from '@opentelemetry/api';
import type { ClientInterceptors } from '@temporalio/client';
import type { WorkerOptions } from '@temporalio/worker';
import { projectRoot } from '../config/paths.js';
import type { FinalizeCaseInput } from '../domain/cases.js';
import type { TracingSettings } from './settings.js';

/** The workflow side's interceptors, compiled; the bundle takes them by path (scripts/bundle-workflows.ts). */
export const workflowTracingPath = path.join(projectRoot, 'dist', 'src', 'tracing', 'workflow-interceptors.cjs');

/** Headers to send with an outgoing call (none: undefined). */
type Headers = Record<string, string> | undefined;

/**
 * The process's tracing: what Temporal's client and worker get, what the API and the activities call, and
 * the flush at stop. Off, every call is a plain function of ours: OpenTelemetry is not even loaded.
 */
export interface Tracing {
  readonly enabled: boolean;
  /** OpenTelemetry's API, loaded with the SDK (the API's server spans are made with it); absent when off. */
  readonly api?: typeof OtelApi;
  /** A workflow started (or signalled) by the client carries the active span to its run. */
  readonly clientInterceptors: ClientInterceptors;
  /** Activities continue their workflow's trace; workflow spans leave the sandbox through a sink. */
  readonly workerOptions: Pick<WorkerOptions, 'interceptors' | 'sinks'>;
  /**
   * The headers with the active trace context added (`traceparent`, `tracestate`), so the receiver of an
   * outgoing call can continue the trace; the same headers when off.
   */
  readonly withTraceContext: (headers: Headers) => Headers;
  /** One span per node that ran, under the active span (the activity recording the case's end). */
  readonly recordNodeSpans: (input: FinalizeCaseInput) => void;
  /** Sends the spans still buffered and unregisters the global provider. */
  shutdown(): Promise<void>;
}

/** Off: no SDK and no API loaded, nothing registered, nothing called per request or per case. */
export const noTracing: Tracing = {
  enabled: false,
  clientInterceptors: {},
  workerOptions: {},
  withTraceContext: (headers) => headers,
  recordNodeSpans: () => undefined,
  shutdown: () => Promise.resolve(),
};

/** Loads and registers the SDK only when the settings turn tracing on (settings.ts). */
export async function startTracing(settings: TracingSettings | undefined): Promise<Tracing> {
  if (!settings) return noTracing;
  const { openTelemetry } = await import('./sdk.js');
  return openTelemetry(settings);
}
