import { expect } from 'vitest';
import type { JobAudit } from '../../src/api/schemas/cases.js';
import type { paths } from '../../src/client/index.js';
import type { Graph } from '../support/graphs.js';
import { answered, type TestResponse, type TestService } from '../support/harness.js';

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

export async function execute(svc: TestService, caseId: string, body: Record<string, unknown>): Promise<TestResponse> {
  return svc.request('POST', `/api/v1/case/${caseId}/execute`, { body });
}

/** Initiates and executes; returns the case id once execute answered 202. */
export async function startCase(
  svc: TestService,
  workflowId: string,
  inputs: Record<string, unknown>,
  executeExtra: Record<string, unknown> = {},
): Promise<string> {
  const caseId = await initiate(svc, { workflowId });
  const r = await execute(svc, caseId, { inputs, ...executeExtra });
  expect(r.status, r.text).toBe(202);
  return caseId;
}

const terminal = ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT'];

export async function waitForEnd(
  svc: TestService,
  caseId: string,
  timeoutMs = 45_000,
  base = '/api/v1/case',
): Promise<Record<string, unknown>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const r = await svc.request('GET', `${base}/${caseId}/status`);
    expect(r.status, r.text).toBe(200);
    if (terminal.includes(r.body.status as string)) return r.body;
    if (Date.now() > until) throw new Error(`case ${caseId} still ${String(r.body.status)} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export async function audit(svc: TestService, caseId: string, base = '/api/v1/case'): Promise<JobAudit> {
  const r = await svc.request('GET', `${base}/${caseId}/audit`);
  expect(r.status, r.text).toBe(200);
  return r.body as unknown as JobAudit;
}

export async function results(svc: TestService, caseId: string) {
  const body = await answered(svc.client.GET('/api/v1/case/{caseId}/results', { params: { path: { caseId } } }), 200);
  // 200 and 202 are both successes to the client; only the 200 body carries results.
  if (!('results' in body)) throw new Error(`case ${caseId} has not finished`);
  return body.results;
}
