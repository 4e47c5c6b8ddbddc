import type * as OtelApi from '@opentelemetry/api';
import type { Tracing } from './tracing.js';

/** `withTraceContext` of tracing that is on (tracing.ts): the active context injected by the registered propagator. */
export function traceContextInjector({ context, propagation }: typeof OtelApi): Tracing['withTraceContext'] {
  return (headers) => {
    const carrier: Record<string, string> = {};
    propagation.inject(context.active(), carrier);
    return Object.keys(carrier).length === 0 ? headers : { ...headers, ...carrier };
  };
}
