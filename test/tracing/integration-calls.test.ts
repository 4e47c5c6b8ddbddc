import { randomBytes } from 'node:crypto';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { field } from '../catalog/support.js';
import { createWorkflow, initiate, waitForEnd } from '../cases/support.js';
import { authorIntegration, connect, connection, localServer, type LocalServer } from '../connections/support.js';
import { answered, startTestService, type TestService } from '../support/harness.js';
import { selfSignedCertificate } from '../support/self-signed.js';
import { Graph, vars, type Var } from '../support/graphs.js';
import { tracingSettings } from '../../src/tracing/settings.js';
import { OtlpReceiver } from './otlp-receiver.js';

/**
 * An integration action's HTTP calls carry the case's trace (docs/observability.md): the action's code runs
 * in the Python sandbox and leaves through the egress tunnel, so the header is added in the child, by
 * http.client, before TLS. Checked against real HTTP and HTTPS servers on loopback.
 */
const code = [
  'import http.client',
  'import ssl',
  'import urllib.request',
  "urllib.request.urlopen(input_data['url'] + '/urllib', timeout=5).read()",
  "own = http.client.HTTPConnection(input_data['host'], int(input_data['port']), timeout=5)",
  "own.request('GET', '/own', headers={'Traceparent': 'set-by-the-action'})",
  'own.getresponse().read()',
  "tls = ssl.create_default_context(cadata=input_data['ca'])",
  "urllib.request.urlopen(input_data['tls_url'] + '/tls', timeout=5, context=tls).read()",
  "result['done'] = 'yes'",
  '',
].join('\n');

const inputs: Var[] = ['url', 'host', 'port', 'tls_url', 'ca'].map((name) => ({ name }));

let svc: TestService;
const otlp = new OtlpReceiver();
let plain: LocalServer;
let tls: { url: string; received: Array<{ url: string; traceparent: unknown }>; close(): void };
let ca: string;
let workflowId: string;

/** A self-signed certificate for 127.0.0.1 and an HTTPS server with it, recording each request's traceparent. */
async function tlsServer() {
  const { key, cert } = selfSignedCertificate('IP:127.0.0.1');
  ca = cert;
  const received: Array<{ url: string; traceparent: unknown }> = [];
  const server = createServer({ key, cert }, (req, res) => {
    received.push({ url: req.url ?? '', traceparent: req.headers.traceparent });
    res.end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `https://127.0.0.1:${port}`, received, close: () => server.close() };
}

beforeAll(async () => {
  await otlp.listen();
  plain = await localServer((_req, res) => res.writeHead(200).end('{}'));
  tls = await tlsServer();
  svc = await startTestService({ tracing: tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: otlp.base }) });
  const integration = await authorIntegration(svc, svc.key, {
    endpoint: `${plain.url}/urllib`,
    code,
    outputs: { done: field('done') },
  });
  const made = await answered(connect(svc, connection(integration, svc.workspaceId)), 201);
  const graph = new Graph();
  const input = graph.input(inputs);
  const action = graph.node({
    name: 'Call the API',
    type: 'action',
    handler_class: 'integration_action',
    process: { connection_id: String(made.activeIntegrationId), action_version_id: integration.actionVersionId },
    input_schema: vars(inputs),
    output_schema: vars([{ name: 'done' }]),
  });
  graph.chain(input, action, graph.output([{ name: 'done' }]));
  workflowId = (await createWorkflow(svc, graph, 'traced action')).workflowId;
});
afterAll(async () => {
  await svc?.stop();
  await Promise.all([otlp.close(), plain?.close()]);
  tls?.close();
});

describe('integration calls with tracing on', () => {
  it("carry the case's traceparent over HTTP and HTTPS; a traceparent the action sets itself is kept", async () => {
    const traceId = randomBytes(16).toString('hex');
    const caseId = await initiate(svc, { workflowId });
    const { port } = new URL(plain.url);
    const r = await svc.request('POST', `/api/v1/case/${caseId}/execute`, {
      body: { inputs: { url: plain.url, host: '127.0.0.1', port, tls_url: tls.url, ca } },
      headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` },
    });
    expect(r.status, r.text).toBe(202);
    const end = await waitForEnd(svc, caseId);
    expect(end.status, JSON.stringify(end)).toBe('COMPLETED');

    const sent = [
      plain.received.find((q) => q.url === '/urllib')?.headers.traceparent,
      tls.received.find((q) => q.url === '/tls')?.traceparent,
    ];
    for (const header of sent) expect(header).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    expect(plain.received.find((q) => q.url === '/own')?.headers.traceparent).toBe('set-by-the-action');
    // The parent named is the node's activity span (runLastNode: it is the case's last), exported in the case's trace.
    const parents = sent.map((header) => String(header).split('-')[2]);
    await expect
      .poll(
        () =>
          otlp
            .inTrace(traceId)
            .filter((span) => parents.includes(span.spanId))
            .map((span) => span.name),
        {
          timeout: 20_000,
        },
      )
      .toEqual(['RunActivity:runLastNode']);
  });
});
