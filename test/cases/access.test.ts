import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newCaller, newKey, newWorkspace } from '../support/keys.js';
import { startTestService, type TestResponse, type TestService } from '../support/harness.js';
import { createWorkflow, initiate, startCase, waitForEnd } from './support.js';
import { Graph } from '../support/graphs.js';

let svc: TestService;
let workflowId: string;
/** The workflow's entity id and its version's id (this process has the version cached once a case ran). */
let entityId: string;
let workflowVersionId: string;
/** A finished case (reads) and a PENDING one (execute, cancel) of the bootstrap workspace. */
let done: string;
let pending: string;
let keys: Record<'otherOrg' | 'otherWorkspace' | 'readOnly' | 'noCaseGrant', string>;

beforeAll(async () => {
  svc = await startTestService();
  const g = new Graph();
  const input = g.input([{ name: 'text' }]);
  const output = g.output([{ name: 'text' }]);
  g.edge(input, output);
  ({ workflowId, entityId, workflowVersionId } = await createWorkflow(svc, g, 'access'));
  done = await startCase(svc, workflowId, { text: 'hi' });
  expect((await waitForEnd(svc, done)).status).toBe('COMPLETED');
  pending = await initiate(svc, { workflowId });

  keys = {
    otherOrg: (await newCaller(svc, ['case:full', 'workflow:full'])).key,
    otherWorkspace: (await newKey(svc, ['case:full', 'workflow:full'], { workspaceIds: [await newWorkspace(svc)] }))
      .key,
    readOnly: (await newKey(svc, ['case:read', 'workflow:read'])).key,
    noCaseGrant: (await newKey(svc, ['workflow:full', 'file:full'])).key,
  };
});
afterAll(async () => {
  await svc?.stop();
});

type Call = [
  name: string,
  method: string,
  path: (caseId: string) => string,
  body?: (caseId: string) => Record<string, unknown>,
];

const reads: Call[] = [
  ['case status', 'GET', (id) => `/api/v1/case/${id}/status`],
  ['case results', 'GET', (id) => `/api/v1/case/${id}/results`],
  ['case audit', 'GET', (id) => `/api/v1/case/${id}/audit`],
  ['job status', 'GET', (id) => `/job/${id}/status`],
  ['job results', 'GET', (id) => `/job/${id}/results`],
  ['job audit', 'GET', (id) => `/job/${id}/audit`],
];
const writes: Call[] = [
  ['case execute', 'POST', (id) => `/api/v1/case/${id}/execute`, () => ({ inputs: { text: 'x' } })],
  ['case cancel', 'POST', (id) => `/api/v1/case/${id}/cancel`],
  ['job execute', 'POST', () => '/job/execute', (id) => ({ jobExecutionId: id, inputs: { text: 'x' } })],
];

async function call(key: string, [, method, path, body]: Call, caseId: string): Promise<TestResponse> {
  return svc.request(method, path(caseId), { key, ...(body ? { body: body(caseId) } : {}) });
}

async function expectAll(key: string, calls: Call[], caseId: string, status: number, text?: string): Promise<void> {
  for (const c of calls) {
    const r = await call(key, c, caseId);
    expect(r.status, `${c[0]}: ${r.text}`).toBe(status);
    expect(r.body.statusCode, c[0]).toBe(status);
    if (text) expect(r.text, c[0]).toContain(text);
  }
}

async function expectUnchanged(): Promise<void> {
  const r = await svc.request('GET', `/api/v1/case/${pending}/status`);
  expect(r.body.status).toBe('PENDING');
}

describe('case access', () => {
  it("hides another organization's cases: 404 on every case and job endpoint", async () => {
    await expectAll(keys.otherOrg, reads, done, 404, 'does not exist');
    await expectAll(keys.otherOrg, writes, pending, 404, 'does not exist');
    for (const body of [
      { workflowId },
      { referenceEntityId: entityId },
      { workflowId: entityId },
      { workflowId, workflowVersionId },
    ]) {
      const init = await svc.request('POST', '/api/v1/case', { key: keys.otherOrg, body });
      expect(init.status, `${JSON.stringify(body)}: ${init.text}`).toBe(404);
    }
    await expectUnchanged();
  });

  it('refuses a key scoped to another workspace of the organization with 403', async () => {
    await expectAll(keys.otherWorkspace, reads, done, 403, 'no access to the workspace');
    await expectAll(keys.otherWorkspace, writes, pending, 403, 'no access to the workspace');
    const init = await svc.request('POST', '/api/v1/case', { key: keys.otherWorkspace, body: { workflowId } });
    expect(init.status, init.text).toBe(403);
    await expectUnchanged();
  });

  it('lets Case: Read read but not initiate, execute or cancel', async () => {
    for (const c of reads) expect((await call(keys.readOnly, c, done)).status, c[0]).toBe(200);
    await expectAll(keys.readOnly, writes, pending, 403, 'Case: Full');
    const init = await svc.request('POST', '/api/v1/case', { key: keys.readOnly, body: { workflowId } });
    expect(init.status, init.text).toBe(403);
    const jobInit = await svc.request('POST', '/job/initiate', { key: keys.readOnly, body: { workflowId } });
    expect(jobInit.status, jobInit.text).toBe(403);
    await expectUnchanged();
  });

  it('refuses a key without case grants everywhere with 403', async () => {
    await expectAll(keys.noCaseGrant, reads, done, 403, 'Case: Read');
    await expectAll(keys.noCaseGrant, writes, pending, 403, 'Case: Full');
    const init = await svc.request('POST', '/api/v1/case', { key: keys.noCaseGrant, body: { workflowId } });
    expect(init.status, init.text).toBe(403);
    await expectUnchanged();
  });

  it('answers 401 without a key and 404 for an unknown case', async () => {
    expect((await svc.request('GET', `/api/v1/case/${done}/status`, { key: null })).status).toBe(401);
    await expectAll(svc.key, reads, crypto.randomUUID(), 404);
  });
});
