import { context, propagation } from '@opentelemetry/api';

/**
 * The headers with the active trace context added (`traceparent`, `tracestate`), so the receiver of an
 * outgoing call can continue the trace. Unchanged when tracing is off (no propagator is registered).
 */
export function withTraceContext(headers: Record<string, string> | undefined): Record<string, string> | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return Object.keys(carrier).length === 0 ? headers : { ...headers, ...carrier };
}
