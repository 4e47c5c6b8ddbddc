import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.js';
import { tracingSettings } from '../../src/tracing/settings.js';
import { OtlpReceiver, type ReceivedSpan } from '../tracing/otlp-receiver.js';
import { runWalkthrough, walkthrough } from './walkthrough.js';

const otlp = new OtlpReceiver();
let svc: TestService;
beforeAll(async () => {
  await otlp.listen();
  svc = await startTestService({ tracing: tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: otlp.base }) });
});
afterAll(async () => {
  await svc?.stop();
  await otlp.close();
});

describe('docs/observability.md: Walk-through: a traced case', () => {
  it('runs the walk-through as written, and the collector gets the trace it shows', async () => {
    const steps = walkthrough('observability.md', 'Walk-through: a traced case');
    expect(steps.map((s) => `${s.method} ${s.status}`)).toEqual(['POST 201', 'POST 201', 'POST 202', 'GET 200']);
    const values = await runWalkthrough(svc, steps);
    const caseId = (values.case as { caseId: string }).caseId;

    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    await expect
      .poll(() => otlp.inTrace(traceId).filter((span) => span.name.startsWith('node ')).length, { timeout: 20_000 })
      .toBe(3);
    const spans = otlp.inTrace(traceId);
    const byId = new Map(spans.map((span) => [span.spanId, span]));
    const parentName = (span: ReceivedSpan) => byId.get(span.parentSpanId ?? '')?.name;
    const named = (name: string) => spans.find((span) => span.name === name)!;

    expect(named('POST /api/v1/case/:caseId/execute').parentSpanId).toBe('00f067aa0ba902b7');
    expect(parentName(named('StartWorkflow:caseRun'))).toBe('POST /api/v1/case/:caseId/execute');
    expect(parentName(named('RunWorkflow:caseRun'))).toBe('StartWorkflow:caseRun');
    expect(named('RunWorkflow:caseRun').attributes).toMatchObject({
      workflowId: `case-${caseId}`,
      workflowType: 'caseRun',
    });
    // The Python node is the case's last activity node: it and the case's end are one local activity.
    expect(parentName(named('RunActivity:runLastNode'))).toBe('StartActivity:runLastNode');
    expect(parentName(named('StartActivity:runLastNode'))).toBe('RunWorkflow:caseRun');
    const nodes = spans.filter((span) => span.name.startsWith('node '));
    expect(nodes.map((span) => [span.name, span.attributes['caseflow.node.id'], parentName(span)]).sort()).toEqual([
      ['node input', '7a0e8a52-0001-4000-8000-000000000001', 'RunActivity:runLastNode'],
      ['node output', '7a0e8a52-0001-4000-8000-000000000003', 'RunActivity:runLastNode'],
      ['node python_code', '7a0e8a52-0001-4000-8000-000000000002', 'RunActivity:runLastNode'],
    ]);
    expect(spans.every((span) => span.serviceName === 'caseflow')).toBe(true);
  });
});
