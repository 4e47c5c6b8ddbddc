import { randomBytes } from 'node:crypto';
import { trace } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answered, startTestService, type TestService } from '../support/harness.js';
import { createWorkflow, initiate, waitForEnd } from '../cases/support.js';
import { Graph, py } from '../support/graphs.js';
import { Receiver } from '../callbacks/receiver.js';
import { deliver, sign } from '../hooks/support.js';
import { tracingSettings } from '../../src/tracing/settings.js';
import { OtlpReceiver, type ReceivedSpan } from './otlp-receiver.js';

/** A caller's trace: a fresh trace id and the caller's span id, and the traceparent carrying them. */
function callerTrace() {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

/** input(text) → Python (upper-cases it) → output(text): an inline node, an activity node, an inline node. */
function upperGraph(): { graph: Graph; nodeIds: string[] } {
  const graph = new Graph();
  const input = graph.input([{ name: 'text' }]);
  const code = graph.python(
    'Upper',
    py('return {"text": inputs["text"].upper()}'),
    [{ name: 'text' }],
    [{ name: 'text' }],
  );
  const output = graph.output([{ name: 'text' }]);
  graph.edge(input, code);
  graph.edge(code, output);
  return { graph, nodeIds: [input, code, output] };
}

/** Starts a case under the caller's trace, with a callback to `callback`; the case id. */
async function executeTraced(svc: TestService, workflowId: string, traceparent: string, callbackUrl: string) {
  const caseId = await initiate(svc, { workflowId });
  await answered(
    svc.client.POST('/api/v1/case/{caseId}/execute', {
      params: { path: { caseId } },
      body: { inputs: { text: 'private words' }, callbackUrl },
      headers: { traceparent },
    }),
    202,
  );
  return caseId;
}

/** Every span of the trace hangs from another span of it, except its root. */
function rootsOf(spans: ReceivedSpan[]): ReceivedSpan[] {
  const ids = new Set(spans.map((span) => span.spanId));
  return spans.filter((span) => !span.parentSpanId || !ids.has(span.parentSpanId));
}

describe('traces off by default', () => {
  let svc: TestService;
  const callback = new Receiver();

  beforeAll(async () => {
    expect(tracingSettings(process.env)).toBeUndefined();
    await callback.listen();
    svc = await startTestService();
  });
  afterAll(async () => {
    await svc?.stop();
    await callback.close();
  });

  it('registers no tracer and sends no traceparent out, even when the caller sent one', async () => {
    expect(trace.getTracer('probe').startSpan('probe').isRecording()).toBe(false);
    const { workflowId } = await createWorkflow(svc, upperGraph().graph, 'untraced');
    const caseId = await executeTraced(svc, workflowId, callerTrace().traceparent, callback.url);
    expect((await waitForEnd(svc, caseId)).status).toBe('COMPLETED');
    await expect.poll(() => callback.received.length, { timeout: 15_000 }).toBe(1);
    expect(callback.received[0]!.headers.traceparent).toBeUndefined();
  });
});

describe('traces on with OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  let svc: TestService;
  const otlp = new OtlpReceiver();
  const callback = new Receiver();
  const subscriber = new Receiver();
  let workflowId: string;
  let nodeIds: string[];

  beforeAll(async () => {
    await Promise.all([otlp.listen(), callback.listen(), subscriber.listen()]);
    svc = await startTestService({
      tracing: tracingSettings({
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.base,
        OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-key=collector%20key',
        OTEL_SERVICE_NAME: 'caseflow-test',
      }),
    });
    const upper = upperGraph();
    nodeIds = upper.nodeIds;
    workflowId = (await createWorkflow(svc, upper.graph, 'traced')).workflowId;
  });
  afterAll(async () => {
    await svc?.stop();
    await Promise.all([otlp.close(), callback.close(), subscriber.close()]);
  });

  it('request → case run → nodes → callback share the caller trace, which the callback receiver continues', async () => {
    await answered(
      svc.client.POST('/api/v1/subscriptions', {
        body: { workspaceId: svc.workspaceId, url: subscriber.url, eventTypes: ['case.completed'] },
      }),
      201,
    );
    const caller = callerTrace();
    const caseId = await executeTraced(svc, workflowId, caller.traceparent, callback.url);
    expect((await waitForEnd(svc, caseId)).status).toBe('COMPLETED');
    await expect.poll(() => callback.received.length, { timeout: 15_000 }).toBe(1);
    const sent = callback.received[0]!.headers.traceparent;
    expect(sent).toMatch(new RegExp(`^00-${caller.traceId}-[0-9a-f]{16}-01$`));

    const complete = (spans: ReceivedSpan[]) =>
      spans.filter((span) => span.name.startsWith('node ')).length === nodeIds.length &&
      spans.some((span) => span.name === 'RunWorkflow:caseRun');
    // The subscriber's event is delivered by a workflow of its own, in the same trace.
    await expect.poll(() => subscriber.received.length, { timeout: 15_000 }).toBe(1);
    expect(subscriber.received[0]!.headers.traceparent).toMatch(new RegExp(`^00-${caller.traceId}-[0-9a-f]{16}-01$`));
    // Spans arrive in batches, a child's before its parent's: complete once it is one tree again.
    await expect
      .poll(() => complete(otlp.inTrace(caller.traceId)) && rootsOf(otlp.inTrace(caller.traceId)).length === 1, {
        timeout: 20_000,
      })
      .toBe(true);
    const spans = otlp.inTrace(caller.traceId);

    // One tree, rooted at the request's span, whose parent is the caller's.
    expect(rootsOf(spans).map((span) => span.name)).toEqual(['POST /api/v1/case/:caseId/execute']);
    const request = spans.find((span) => span.name === 'POST /api/v1/case/:caseId/execute')!;
    expect(request.parentSpanId).toBe(caller.spanId);
    expect(request.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/api/v1/case/:caseId/execute',
      'http.response.status_code': 202,
      'caseflow.organization.id': svc.organizationId,
    });
    expect(spans.map((span) => span.name)).toEqual(
      expect.arrayContaining(['StartWorkflow:caseRun', 'RunWorkflow:caseRun', 'RunActivity:runLastNode']),
    );

    const nodes = spans.filter((span) => span.name.startsWith('node '));
    expect(nodes.map((span) => span.attributes['caseflow.node.id']).sort()).toEqual([...nodeIds].sort());
    expect(nodes.map((span) => span.attributes['caseflow.node.status'])).toEqual(nodes.map(() => 'completed'));
    expect(nodes.find((span) => span.attributes['caseflow.node.id'] === nodeIds[1])).toMatchObject({
      name: 'node python_code',
      attributes: { 'caseflow.node.kind': 'python_code', 'caseflow.case.id': caseId },
    });

    // The callback's traceparent names a span of this trace as its parent.
    // The callback's and the subscriber's traceparent name spans of this trace as their parents.
    const parents = [sent, subscriber.received[0]!.headers.traceparent].map((header) => String(header).split('-')[2]);
    expect(spans.map((span) => span.spanId)).toEqual(expect.arrayContaining(parents));
    expect(spans.every((span) => span.serviceName === 'caseflow-test')).toBe(true);
  });

  it('continues the caller trace of a webhook trigger delivery', async () => {
    const hook = await answered(
      svc.client.POST('/api/v1/workflow/{workflowId}/hooks', {
        params: { path: { workflowId } },
        body: { name: 'traced hook', scheme: 'standard-webhooks' },
      }),
      201,
    );
    const caller = callerTrace();
    const body = JSON.stringify({ text: 'from a hook' });
    const r = await deliver(svc, hook.hookId, body, {
      ...sign.standardWebhooks(hook.secret, body),
      traceparent: caller.traceparent,
    });
    expect(r.status, r.text).toBe(202);
    expect((await waitForEnd(svc, String(r.body.caseId))).status).toBe('COMPLETED');
    await expect
      .poll(() => otlp.inTrace(caller.traceId).some((span) => span.name === 'RunWorkflow:caseRun'), { timeout: 20_000 })
      .toBe(true);
    const [root] = rootsOf(otlp.inTrace(caller.traceId));
    expect(root).toMatchObject({ name: 'POST /hooks/:hookId', parentSpanId: caller.spanId });
  });

  it('starts a trace of its own for any other request, whatever traceparent it sends', async () => {
    const caller = callerTrace();
    await answered(
      svc.client.GET('/api/v1/workflow/{workflowId}', {
        params: { path: { workflowId } },
        headers: { traceparent: caller.traceparent },
      }),
      200,
    );
    await expect
      .poll(() => otlp.spans.some((span) => span.name === 'GET /api/v1/workflow/:workflowId'), { timeout: 20_000 })
      .toBe(true);
    expect(otlp.inTrace(caller.traceId)).toEqual([]);
    const read = otlp.spans.find((span) => span.name === 'GET /api/v1/workflow/:workflowId')!;
    expect(read.parentSpanId ?? '').toBe('');
  });

  it('exports OTLP/HTTP JSON with the configured headers, and never a key, a secret or a body', async () => {
    expect(otlp.exports.length).toBeGreaterThan(0);
    for (const sent of otlp.exports) {
      expect(sent).toMatchObject({
        method: 'POST',
        path: '/v1/traces',
        headers: { 'x-collector-key': 'collector key' },
      });
      expect(sent.body).not.toContain(svc.key);
      expect(sent.body).not.toContain('private words');
      expect(sent.body).not.toContain('from a hook');
    }
  });
});
