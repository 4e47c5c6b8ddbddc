import { expect } from 'vitest';
import type { CaseflowClient, paths } from '../../src/client/index.js';
import type { Graph } from '../support/graphs.js';
import { answered, type TestResponse, type TestService } from '../support/harness.js';
import { clientFor, newKey } from '../support/keys.js';

type InitiateBody = paths['/api/v1/case']['post']['requestBody']['content']['application/json'];

export async function createWorkflow(
  svc: TestService,
  g: Graph,
  name = 'case test',
): Promise<{ workflowId: string; entityId: string; workflowVersionId: string }> {
  return answered(
    svc.client.POST('/api/v1/workflow', {
      params: { header: { 'x-workspace-id': svc.workspaceId } },
      body: { name, activeStatus: 'active', nodes: g.nodes, edges: g.edges },
    }),
    201,
  );
}

export async function initiate(svc: TestService, body: InitiateBody): Promise<string> {
  return (await answered(svc.client.POST('/api/v1/case', { body }), 201)).caseId;
}

type ExecuteBody = NonNullable<
  paths['/api/v1/case/{caseId}/execute']['post']['requestBody']
>['content']['application/json'];

/** Untyped on purpose: tests send bodies the contract refuses (wrong types, unknown fields) and read the 4xx. */
export async function execute(svc: TestService, caseId: string, body: Record<string, unknown>): Promise<TestResponse> {
  return svc.request('POST', `/api/v1/case/${caseId}/execute`, { body });
}

/** Initiates and executes; returns the case id once execute answered 202. */
export async function startCase(
  svc: TestService,
  workflowId: string,
  inputs: ExecuteBody['inputs'],
  executeExtra: Omit<ExecuteBody, 'inputs'> = {},
): Promise<string> {
  const caseId = await initiate(svc, { workflowId });
  await answered(
    svc.client.POST('/api/v1/case/{caseId}/execute', {
      params: { path: { caseId } },
      body: { inputs, ...executeExtra },
    }),
    202,
  );
  return caseId;
}

/** A case's status (200), or a legacy job's when `base` is `/job`. */
export async function caseStatus(svc: TestService, caseId: string, base: '/api/v1/case' | '/job' = '/api/v1/case') {
  return base === '/job'
    ? answered(svc.client.GET('/job/{jobExecutionId}/status', { params: { path: { jobExecutionId: caseId } } }), 200)
    : answered(svc.client.GET('/api/v1/case/{caseId}/status', { params: { path: { caseId } } }), 200);
}

const terminal = ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT'];

export async function waitForEnd(
  svc: TestService,
  caseId: string,
  timeoutMs = 45_000,
  base: '/api/v1/case' | '/job' = '/api/v1/case',
): ReturnType<typeof caseStatus> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const status = await caseStatus(svc, caseId, base);
    if (terminal.includes(status.status)) return status;
    if (Date.now() > until) throw new Error(`case ${caseId} still ${status.status} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export async function audit(svc: TestService, caseId: string, base: '/api/v1/case' | '/job' = '/api/v1/case') {
  return base === '/job'
    ? answered(svc.client.GET('/job/{jobExecutionId}/audit', { params: { path: { jobExecutionId: caseId } } }), 200)
    : answered(svc.client.GET('/api/v1/case/{caseId}/audit', { params: { path: { caseId } } }), 200);
}

export async function results(svc: TestService, caseId: string) {
  const body = await answered(svc.client.GET('/api/v1/case/{caseId}/results', { params: { path: { caseId } } }), 200);
  // 200 and 202 are both successes to the client; only the 200 body carries results.
  if (!('results' in body)) throw new Error(`case ${caseId} has not finished`);
  return body.results;
}

/** The most spans (nodes, cases) whose [start, end] overlap at one moment (ISO times). */
export function peakOverlap(spans: Array<{ start: string; end: string }>): number {
  const events = spans.flatMap((s) => [
    { at: s.start, delta: 1 },
    { at: s.end, delta: -1 },
  ]);
  // An end and a start at the same instant do not overlap: the slot was handed over.
  events.sort((x, y) => x.at.localeCompare(y.at) || x.delta - y.delta);
  let open = 0;
  let peak = 0;
  for (const e of events) {
    open += e.delta;
    peak = Math.max(peak, open);
  }
  return peak;
}

/** A second organization (verified, one workspace), a client with a key for its cases, and `graph` as its workflow. */
export async function otherOrganization(
  svc: TestService,
  graph: Graph,
): Promise<{ organizationId: string; client: CaseflowClient; workflowId: string }> {
  const org = await svc.admin('POST', '/admin/organizations', { name: 'Org B', verified: true });
  expect(org.status, org.text).toBe(201);
  const organizationId = String(org.body.id);
  const workspace = await svc.admin('POST', `/admin/organizations/${organizationId}/workspaces`, { name: 'B' });
  const client = clientFor(
    svc,
    (await newKey(svc, ['case:full', 'workflow:full', 'code:full'], { organizationId })).key,
  );
  const wf = await answered(
    client.POST('/api/v1/workflow', {
      params: { header: { 'x-workspace-id': String(workspace.body.id) } },
      body: { name: 'B workflow', activeStatus: 'active', nodes: graph.nodes, edges: graph.edges },
    }),
    201,
  );
  return { organizationId, client, workflowId: wf.workflowId };
}

/** A case of `workflowId` initiated and executed through `client`: its id and its status as execute answered. */
export async function startCaseAs(
  client: CaseflowClient,
  workflowId: string,
  inputs: Record<string, unknown>,
): Promise<{ caseId: string; status: string }> {
  const { caseId } = await answered(client.POST('/api/v1/case', { body: { workflowId } }), 201);
  const run = await answered(
    client.POST('/api/v1/case/{caseId}/execute', { params: { path: { caseId } }, body: { inputs } }),
    202,
  );
  return { caseId, status: run.status };
}

/** Waits for the case's end through `client` (another organization's key); its status then. */
export async function waitForEndAs(client: CaseflowClient, caseId: string) {
  const status = () => answered(client.GET('/api/v1/case/{caseId}/status', { params: { path: { caseId } } }), 200);
  await expect
    .poll(async () => (await status()).status, { timeout: 120_000, interval: 200 })
    .toMatch(/COMPLETED|FAILED|CANCELLED|TIMED_OUT/);
  return status();
}
