/**
 * Workflow-side tracing, bundled with the workflows (scripts/bundle-workflows.ts). A run traces only when
 * its start carried a trace context (the client interceptor adds one when tracing is on): with tracing off
 * nothing here creates a tracer or a span, and the histories of untraced runs replay as they were recorded.
 *
 * CommonJS on purpose: the SDK evaluates this module and everything it imports again for every run (each
 * run has its own module cache in the reused context), so Temporal's interceptors and the OpenTelemetry
 * packages under them (~0.7 MB of the bundle) are required when a traced run starts, never for an untraced
 * one. Webpack evaluates a `require()` where it is called; an ES import is evaluated with the module.
 */
import type { WorkflowInterceptors } from '@temporalio/workflow';

type TemporalOtel = typeof import('@temporalio/interceptors-opentelemetry/lib/workflow/index.js');

/** The header Temporal's OpenTelemetry interceptors carry the span context in. */
const traceHeader = '_tracer-data';

function temporalOtel(): TemporalOtel {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded by traced runs only (above)
  return require('@temporalio/interceptors-opentelemetry/lib/workflow/index.js') as TemporalOtel;
}

export const interceptors = (): WorkflowInterceptors => {
  // Built when the run turns out traced, never otherwise (each builds the isolate's tracer on first use).
  let traced:
    | {
        outbound: InstanceType<TemporalOtel['OpenTelemetryOutboundInterceptor']>;
        internals: InstanceType<TemporalOtel['OpenTelemetryInternalsInterceptor']>;
      }
    | undefined;
  return {
    inbound: [
      {
        execute(input, next) {
          if (!(traceHeader in input.headers)) return next(input);
          const otel = temporalOtel();
          traced = {
            outbound: new otel.OpenTelemetryOutboundInterceptor(),
            internals: new otel.OpenTelemetryInternalsInterceptor(),
          };
          return new otel.OpenTelemetryInboundInterceptor().execute(input, next);
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
