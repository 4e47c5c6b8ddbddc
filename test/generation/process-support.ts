import { expect } from 'vitest';
import type { TestService } from '../support/harness.js';
import { authorIntegration, connect, connection, localServer, type LocalServer } from '../connections/support.js';
import { fixture } from '../discovery/support.js';
import { field } from '../catalog/support.js';

export interface RunRecord {
  status: string;
  planner: string;
  needs_attention: string[];
  applied_versions: Array<{ stage: string; workflowVersionNumber: number }>;
  tasks_by_agent: Array<{ specialty: string; status: string; result_summary: string }>;
  source_process: {
    processId: string;
    processVersionId: string | null;
    versionNumber: number | null;
    name: string;
    processUpdatedAt: string;
  } | null;
}

export interface GraphNode {
  name: string;
  handler_class: string;
  process?: Record<string, unknown>;
}

export const startGeneration = (svc: TestService, body: Record<string, unknown>, key?: string) =>
  svc.request('POST', '/api/v1/workflow/generate', { body, key, headers: { 'x-workspace-id': svc.workspaceId } });

/** Polls the run until it ends. */
export async function finishedRun(svc: TestService, workflowId: string): Promise<RunRecord> {
  for (let i = 0; i < 300; i++) {
    const res = await svc.request('GET', `/api/v1/workflow/${workflowId}/run`);
    expect(res.status, res.text).toBe(200);
    const run = res.body as unknown as RunRecord;
    if (!['received', 'processing'].includes(run.status)) return run;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('run did not finish');
}

/** Starts a run and waits for its end. */
export async function generate(
  svc: TestService,
  body: Record<string, unknown>,
): Promise<{ workflowId: string; run: RunRecord }> {
  const res = await startGeneration(svc, body);
  expect(res.status, res.text).toBe(202);
  const workflowId = String(res.body.workflowId);
  return { workflowId, run: await finishedRun(svc, workflowId) };
}

/** [name, connection id] of each integration_action node. */
export const integrationNodes = (nodes: GraphNode[]) =>
  nodes.filter((n) => n.handler_class === 'integration_action').map((n) => [n.name, n.process?.connection_id]);

export async function nodesOf(svc: TestService, workflowId: string): Promise<GraphNode[]> {
  const res = await svc.request('GET', `/api/v1/workflow/${workflowId}`);
  expect(res.status, res.text).toBe(200);
  return Object.values(res.body.nodes as Record<string, GraphNode>);
}

/** Imports the Camunda Modeler fixture (invoice approval) into the service's workspace; returns the process id. */
export async function importInvoiceProcess(svc: TestService): Promise<string> {
  const res = await svc.request('POST', '/api/v1/discovery/process/import', {
    rawBody: fixture('invoice-approval.bpmn'),
    headers: { 'x-workspace-id': svc.workspaceId, 'content-type': 'application/xml' },
  });
  expect(res.status, res.text).toBe(201);
  return (res.body.process as { id: string }).id;
}

/** Python of the ERP action: posts its `text` input to the API and returns the record id it answers. */
const erpCode = (url: string) =>
  [
    'import json',
    'import urllib.request',
    "body = json.dumps({'text': input_data['text']}).encode()",
    `request = urllib.request.Request(${JSON.stringify(url)}, data=body, headers={'X-API-Key': credential_value['api_key']})`,
    'with urllib.request.urlopen(request, timeout=5) as answer:',
    "    result['record_id'] = json.loads(answer.read().decode())['id']",
    '',
  ].join('\n');

export interface ConnectedErp {
  server: LocalServer;
  connectionId: string;
}

/** An integration named "ERP system" (the fixture's data store), connected in the service's workspace, over a real local API. */
export async function connectErp(svc: TestService): Promise<ConnectedErp> {
  const server = await localServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"id":"ERP-42"}'),
  );
  const integration = await authorIntegration(svc, svc.key, {
    name: 'ERP system',
    endpoint: `${server.url}/records`,
    code: erpCode(`${server.url}/records`),
    outputs: { record_id: field('record_id') },
  });
  const res = await connect(
    svc,
    connection(integration, svc.workspaceId, { credentialData: { api_key: 'erp-secret-1' } }),
  );
  expect(res.status, res.text).toBe(201);
  return { server, connectionId: String(res.body.activeIntegrationId) };
}
