/**
 * The OpenTelemetry API and SDK, loaded by tracing.ts only when tracing is on: a Node tracer provider (async-hooks
 * context, W3C trace context propagation) exporting OTLP/HTTP JSON in batches, and Temporal's interceptors.
 */
import * as api from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import {
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  OpenTelemetryWorkflowClientInterceptor,
  makeWorkflowExporter,
} from '@temporalio/interceptors-opentelemetry';
import { nodeSpanRecorder } from './node-spans.js';
import { traceContextInjector } from './propagation.js';
import type { TracingSettings } from './settings.js';
import type { Tracing } from './tracing.js';

export function openTelemetry(settings: TracingSettings): Tracing {
  const resource = new Resource({ [ATTR_SERVICE_NAME]: settings.serviceName });
  const processor = new BatchSpanProcessor(new OTLPTraceExporter({ url: settings.url, headers: settings.headers }));
  const provider = new NodeTracerProvider({ resource, spanProcessors: [processor] });
  provider.register();
  return {
    enabled: true,
    api,
    clientInterceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor()] },
    workerOptions: {
      interceptors: {
        activity: [
          (ctx) => ({
            inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
            outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
          }),
        ],
      },
      sinks: { exporter: makeWorkflowExporter(processor, resource) },
    },
    withTraceContext: traceContextInjector(api),
    recordNodeSpans: nodeSpanRecorder(api),
    async shutdown() {
      await provider.shutdown();
      // A later start in the same process (tests) registers its own provider.
      api.trace.disable();
      api.propagation.disable();
      api.context.disable();
    },
  };
}
