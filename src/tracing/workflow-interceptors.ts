/**
 * Workflow-side tracing, bundled with the workflows (scripts/bundle-workflows.ts). A run traces only when
 * its start carried a trace context (the client interceptor adds one when tracing is on): with tracing off
 * nothing here creates a tracer or a span, and the histories of untraced runs replay as they were recorded.
 */
import {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryInternalsInterceptor,
  OpenTelemetryOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/workflow/index.js';
import type { WorkflowInterceptors } from '@temporalio/workflow';

/** The header Temporal's OpenTelemetry interceptors carry the span context in. */
const traceHeader = '_tracer-data';

export const interceptors = (): WorkflowInterceptors => {
  // Built when the run turns out traced, never otherwise (each builds the isolate's tracer on first use).
  let traced: { outbound: OpenTelemetryOutboundInterceptor; internals: OpenTelemetryInternalsInterceptor } | undefined;
  return {
    inbound: [
      {
        execute(input, next) {
          if (!(traceHeader in input.headers)) return next(input);
          traced = {
            outbound: new OpenTelemetryOutboundInterceptor(),
            internals: new OpenTelemetryInternalsInterceptor(),
          };
          return new OpenTelemetryInboundInterceptor().execute(input, next);
        },
      },
    ],
    outbound: [
      {
        scheduleActivity: (input, next) => (traced ? traced.outbound.scheduleActivity(input, next) : next(input)),
        scheduleLocalActivity: (input, next) =>
          traced ? traced.outbound.scheduleLocalActivity(input, next) : next(input),
        startChildWorkflowExecution: (input, next) =>
          traced ? traced.outbound.startChildWorkflowExecution(input, next) : next(input),
        signalWorkflow: (input, next) => (traced ? traced.outbound.signalWorkflow(input, next) : next(input)),
        continueAsNew: (input, next) => (traced ? traced.outbound.continueAsNew(input, next) : next(input)),
        getLogAttributes: (input, next) => (traced ? traced.outbound.getLogAttributes(input, next) : next(input)),
      },
    ],
    internals: [
      {
        dispose(input, next) {
          // Temporal's returns a promise that only calls next; nothing waits for a dispose.
          if (traced) void traced.internals.dispose(input, next);
          else next(input);
        },
      },
    ],
  };
};
