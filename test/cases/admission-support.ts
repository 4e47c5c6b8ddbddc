import { expect } from 'vitest';
import type { CaseflowClient } from '../../src/client/index.js';
import { sleeper } from '../support/graphs.js';
import { answered, startTestService, type TestService, type TestServiceOptions } from '../support/harness.js';
import { clientFor, newKey } from '../support/keys.js';

/**
 * What the admission tests (concurrency caps, the fair share) set up alike: a service whose admission
 * pass runs every 300 ms, so a freed slot or an opened gate lets queued cases in promptly, and other
 * organizations whose cases hold their slot a while.
 */
export function startAdmissionService(
  cases: Record<string, unknown>,
  options: Omit<TestServiceOptions, 'config'> = {},
): Promise<TestService> {
  return startTestService({ ...options, config: { cases: { admissionIntervalMs: 300, ...cases } } });
}

/** The fair share on, organizations counted active and runs young for a minute (longer than any test here). */
export function fairShare(budget: number, floor: number, saturation: number) {
  return { enabled: true, budget, floor, activeWindowMs: 60_000, runnableMs: 60_000, saturation };
}

/** Another organization whose workflow sleeps `seconds`; its cases started, and their ends read, through its own key. */
export async function sleepingOrganization(svc: TestService, seconds: number) {
  const { organizationId, client, workflowId } = await otherOrganization(svc, seconds);
  return {
    organizationId,
    client,
    /** One case, executed: its id and its status as execute answered. */
    start: (text: string) => startCaseAs(client, workflowId, { text }),
    /** The case's status once it has ended. */
    end: (caseId: string) => waitForEndAs(client, caseId),
  };
}

/** A second organization (verified, one workspace), a client with a key for its cases, and a sleeper as its workflow. */
async function otherOrganization(
  svc: TestService,
  seconds: number,
): Promise<{ organizationId: string; client: CaseflowClient; workflowId: string }> {
  const graph = sleeper(seconds);
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
async function startCaseAs(
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

async function waitForEndAs(client: CaseflowClient, caseId: string) {
  const status = () => answered(client.GET('/api/v1/case/{caseId}/status', { params: { path: { caseId } } }), 200);
  await expect
    .poll(async () => (await status()).status, { timeout: 120_000, interval: 200 })
    .toMatch(/COMPLETED|FAILED|CANCELLED|TIMED_OUT/);
  return status();
}
