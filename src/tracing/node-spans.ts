import type * as OtelApi from '@opentelemetry/api';
import type { Tracing } from './tracing.js';

/**
 * `recordNodeSpans` of tracing that is on (tracing.ts): one span per node that ran, under the span recording
 * the case's end, with the node's own times: the inline kinds run inside the workflow (no span of their own
 * there), so every node is told the same way, from the record the case keeps. Ids, kind, status and attempts
 * only; never inputs, outputs or messages.
 */
export function nodeSpanRecorder({ trace, SpanStatusCode }: typeof OtelApi): Tracing['recordNodeSpans'] {
  return ({ caseId, progress }) => {
    if (!trace.getActiveSpan()?.isRecording()) return;
    const tracer = trace.getTracer('caseflow');
    for (const node of Object.values(progress.nodes)) {
      if (!node.startedAt) continue;
      const span = tracer.startSpan(`node ${node.handlerClass}`, {
        startTime: new Date(node.startedAt),
        attributes: {
          'caseflow.case.id': caseId,
          'caseflow.node.id': node.nodeId,
          'caseflow.node.kind': node.handlerClass,
          'caseflow.node.status': node.status,
          'caseflow.node.attempts': node.attempts,
        },
      });
      if (node.status === 'failed')
        span.setStatus({ code: SpanStatusCode.ERROR, message: node.error?.kind ?? 'failed' });
      span.end(new Date(node.finishedAt ?? node.startedAt));
    }
  };
}
