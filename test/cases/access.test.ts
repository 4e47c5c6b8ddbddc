import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type CaseflowClient } from '../../src/client/index.js';
import { clientFor, newCaller, newKey, newWorkspace } from '../support/keys.js';
import { answered, refused, startTestService, type TestService } from '../support/harness.js';
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
/** Clients calling with keys that may not do everything. */
let keys: Record<'otherOrg' | 'otherWorkspace' | 'readOnly' | 'noCaseGrant', CaseflowClient>;

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
    otherOrg: clientFor(svc, (await newCaller(svc, ['case:full', 'workflow:full'])).key),
    otherWorkspace: clientFor(
      svc,
      (await newKey(svc, ['case:full', 'workflow:full'], { workspaceIds: [await newWorkspace(svc)] })).key,
    ),
    readOnly: clientFor(svc, (await newKey(svc, ['case:read', 'workflow:read'])).key),
    noCaseGrant: clientFor(svc, (await newKey(svc, ['workflow:full', 'file:full'])).key),
  };
});
afterAll(async () => {
  await svc?.stop();
});

/** A case or job route called as one client on one case: its refusal's status and body. */
type Call = [
  name: string,
  send: (client: CaseflowClient, caseId: string) => Promise<{ error?: { statusCode: number }; response: Response }>,
];

const onCase = (caseId: string) => ({ params: { path: { caseId } } });
const onJob = (jobExecutionId: string) => ({ params: { path: { jobExecutionId } } });

const reads: Call[] = [
  ['case status', (c, id) => c.GET('/api/v1/case/{caseId}/status', onCase(id))],
  ['case results', (c, id) => c.GET('/api/v1/case/{caseId}/results', onCase(id))],
  ['case audit', (c, id) => c.GET('/api/v1/case/{caseId}/audit', onCase(id))],
  ['job status', (c, id) => c.GET('/job/{jobExecutionId}/status', onJob(id))],
  ['job results', (c, id) => c.GET('/job/{jobExecutionId}/results', onJob(id))],
  ['job audit', (c, id) => c.GET('/job/{jobExecutionId}/audit', onJob(id))],
];
const writes: Call[] = [
  [
    'case execute',
    (c, id) => c.POST('/api/v1/case/{caseId}/execute', { ...onCase(id), body: { inputs: { text: 'x' } } }),
  ],
  ['case cancel', (c, id) => c.POST('/api/v1/case/{caseId}/cancel', onCase(id))],
  ['job execute', (c, id) => c.POST('/job/execute', { body: { jobExecutionId: id, inputs: { text: 'x' } } })],
];

async function expectAll(
  client: CaseflowClient,
  calls: Call[],
  caseId: string,
  status: number,
  text?: string,
): Promise<void> {
  for (const [name, send] of calls) {
    const error = await refused(send(client, caseId), status);
    expect(error.statusCode, name).toBe(status);
    if (text) expect(JSON.stringify(error), name).toContain(text);
  }
}

async function expectUnchanged(): Promise<void> {
  const r = await answered(svc.client.GET('/api/v1/case/{caseId}/status', onCase(pending)), 200);
  expect(r.status).toBe('PENDING');
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
      await refused(keys.otherOrg.POST('/api/v1/case', { body }), 404);
    }
    await expectUnchanged();
  });

  it('refuses a key scoped to another workspace of the organization with 403', async () => {
    await expectAll(keys.otherWorkspace, reads, done, 403, 'no access to the workspace');
    await expectAll(keys.otherWorkspace, writes, pending, 403, 'no access to the workspace');
    await refused(keys.otherWorkspace.POST('/api/v1/case', { body: { workflowId } }), 403);
    await expectUnchanged();
  });

  it('lets Case: Read read but not initiate, execute or cancel', async () => {
    for (const [name, send] of reads) expect((await send(keys.readOnly, done)).response.status, name).toBe(200);
    await expectAll(keys.readOnly, writes, pending, 403, 'Case: Full');
    await refused(keys.readOnly.POST('/api/v1/case', { body: { workflowId } }), 403);
    await refused(keys.readOnly.POST('/job/initiate', { body: { workflowId } }), 403);
    await expectUnchanged();
  });

  it('refuses a key without case grants everywhere with 403', async () => {
    await expectAll(keys.noCaseGrant, reads, done, 403, 'Case: Read');
    await expectAll(keys.noCaseGrant, writes, pending, 403, 'Case: Full');
    await refused(keys.noCaseGrant.POST('/api/v1/case', { body: { workflowId } }), 403);
    await expectUnchanged();
  });

  it('answers 401 without a key and 404 for an unknown case', async () => {
    await refused(createClient({ baseUrl: svc.url }).GET('/api/v1/case/{caseId}/status', onCase(done)), 401);
    await expectAll(svc.client, reads, crypto.randomUUID(), 404);
  });
});
