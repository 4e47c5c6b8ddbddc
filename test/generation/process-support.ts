import { expect } from 'vitest';
import { createClient, type CaseflowClient, type paths } from '../../src/client/index.js';
import { answered, type TestService } from '../support/harness.js';
import { authorIntegration, connect, connection, localServer, type LocalServer } from '../connections/support.js';
import { fixture } from '../discovery/support.js';
import { field } from '../catalog/support.js';

export type RunRecord =
  paths['/api/v1/workflow/{workflowId}/run']['get']['responses'][200]['content']['application/json'];
export type GenerateBody = paths['/api/v1/workflow/generate']['post']['requestBody']['content']['application/json'];
type WorkflowDetails = paths['/api/v1/workflow/{workflowId}']['get']['responses'][200]['content']['application/json'];
export type GraphNode = WorkflowDetails['nodes'][string];

/** Whom a run is started as, and where: the service's own key and workspace by default. */
export interface StartAs {
  key?: string;
  workspaceId?: string;
}

export const startGeneration = (svc: TestService, body: GenerateBody, as: StartAs = {}) =>
  (as.key === undefined ? svc.client : createClient({ baseUrl: svc.url, key: as.key })).POST(
    '/api/v1/workflow/generate',
    { params: { header: { 'x-workspace-id': as.workspaceId ?? svc.workspaceId } }, body },
  );

/** The workflow's latest run (or `runId`), read with `client` (the service's own key by default). */
export const readRun = (svc: TestService, workflowId: string, runId?: string, client: CaseflowClient = svc.client) =>
  client.GET('/api/v1/workflow/{workflowId}/run', {
    params: { path: { workflowId }, query: runId ? { runId } : {} },
  });

export const finished = (run: RunRecord) => !['received', 'processing'].includes(run.status);

/** Polls the run until `done` holds of it; fails after `timeoutMs`. */
export async function untilRun(
  svc: TestService,
  workflowId: string,
  done: (run: RunRecord) => boolean = finished,
  options: { timeoutMs?: number; client?: CaseflowClient } = {},
): Promise<RunRecord> {
  const deadline = Date.now() + (options.timeoutMs ?? 75_000);
  for (;;) {
    const run = await answered(readRun(svc, workflowId, undefined, options.client), 200);
    if (done(run)) return run;
    if (Date.now() > deadline) throw new Error(`run did not get there: ${JSON.stringify(run).slice(0, 2000)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Polls the run until it ends. */
export const finishedRun = (svc: TestService, workflowId: string) => untilRun(svc, workflowId);

/** Starts a run and waits for its end. */
export async function generate(
  svc: TestService,
  body: GenerateBody,
  as: StartAs = {},
): Promise<{ workflowId: string; run: RunRecord }> {
  const { workflowId } = await answered(startGeneration(svc, body, as), 202);
  return { workflowId, run: await finishedRun(svc, workflowId) };
}

/** [name, connection id] of each integration_action node. */
export const integrationNodes = (nodes: GraphNode[]) =>
  nodes.filter((n) => n.handler_class === 'integration_action').map((n) => [n.name, n.process?.connection_id]);

/** Activates the workflow's latest version (a generated version is saved inactive). */
export async function activate(svc: TestService, workflowId: string): Promise<void> {
  await answered(
    svc.client.POST('/api/v1/workflow/{workflowId}/activate', { params: { path: { workflowId } }, body: {} }),
    200,
  );
}

export async function nodesOf(svc: TestService, workflowId: string): Promise<GraphNode[]> {
  const details = await answered(
    svc.client.GET('/api/v1/workflow/{workflowId}', { params: { path: { workflowId } } }),
    200,
  );
  return Object.values(details.nodes);
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
  const res = await answered(
    connect(svc, connection(integration, svc.workspaceId, { credentialData: { api_key: 'erp-secret-1' } })),
    201,
  );
  return { server, connectionId: String(res.activeIntegrationId) };
}
