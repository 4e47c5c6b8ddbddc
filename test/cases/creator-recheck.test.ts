import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseKey } from '../../src/auth/api-keys.js';
import type { CaseflowClient } from '../../src/client/index.js';
import { answered, startTestService, type TestService } from '../support/harness.js';
import { clientFor, newCaller, newKey } from '../support/keys.js';
import { Graph, sleeper, textChain, py, vars } from '../support/graphs.js';

/**
 * A case that starts after the request that asked for it starts as the key that created it, as that
 * key stands then (docs/security.md): a delayed start whose startAt comes, a queued case admitted
 * from its queue, a call_workflow child. Each test plays an organization of its own whose key is
 * revoked while its case waits; a second key of that organization (Case: Read) watches.
 */
let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ config: { cases: { maxStartDelayMs: 3_600_000 } } });
});
afterAll(async () => {
  await svc?.stop();
});

interface Tenant {
  organizationId: string;
  workspaceId: string;
  /** The key that creates the cases, revoked by `revoke`. */
  creator: CaseflowClient;
  revoke(): Promise<void>;
  /** Another key of the organization, which reads the cases after the revocation. */
  reader: CaseflowClient;
}

async function tenant(): Promise<Tenant> {
  const caller = await newCaller(svc, ['case:full', 'workflow:full', 'code:full']);
  const reader = await newKey(svc, ['case:read', 'workflow:read'], { organizationId: caller.organizationId });
  const keyId = parseKey(caller.key)?.id;
  return {
    organizationId: caller.organizationId,
    workspaceId: caller.workspaceId,
    creator: clientFor(svc, caller.key),
    reader: clientFor(svc, reader.key),
    revoke: async () => expect((await svc.admin('POST', `/admin/keys/${keyId}/revoke`)).status).toBeLessThan(300),
  };
}

async function saveWorkflow(t: Tenant, g: Graph, name: string): Promise<string> {
  const saved = await answered(
    t.creator.POST('/api/v1/workflow', {
      params: { header: { 'x-workspace-id': t.workspaceId } },
      body: { name, activeStatus: 'active', nodes: g.nodes, edges: g.edges },
    }),
    201,
  );
  return saved.workflowId;
}

/** Initiates and executes as the creator; the case id and where execute left it (RUNNING, QUEUED). */
async function start(t: Tenant, workflowId: string, startAt?: string): Promise<{ caseId: string; status: string }> {
  const { caseId } = await answered(t.creator.POST('/api/v1/case', { body: { workflowId } }), 201);
  const executed = await answered(
    t.creator.POST('/api/v1/case/{caseId}/execute', {
      params: { path: { caseId } },
      body: { inputs: { text: 'x' }, ...(startAt ? { startAt } : {}) },
    }),
    202,
  );
  return { caseId, status: executed.status };
}

async function ended(t: Tenant, caseId: string) {
  const until = Date.now() + 90_000;
  for (;;) {
    const status = await answered(t.reader.GET('/api/v1/case/{caseId}/status', { params: { path: { caseId } } }), 200);
    if (['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT'].includes(status.status)) return status;
    if (Date.now() > until) throw new Error(`case ${caseId} still ${status.status}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function executedNodes(t: Tenant, caseId: string): Promise<unknown[]> {
  const audit = await answered(t.reader.GET('/api/v1/case/{caseId}/audit', { params: { path: { caseId } } }), 200);
  return audit.executed_nodes;
}

const echo = () => textChain('Echo', py('return {"text": inputs["text"]}'));

describe('a case that starts later, after its key was revoked', () => {
  it('a delayed start ends FAILED at startAt, naming the revoked key, and runs no node', async () => {
    const t = await tenant();
    const workflowId = await saveWorkflow(t, echo(), 'delayed');
    const startAt = new Date(Date.now() + 4000).toISOString();
    const { caseId } = await start(t, workflowId, startAt);
    await t.revoke();
    const end = await ended(t, caseId);
    expect(end.status).toBe('FAILED');
    expect(end.error?.message).toMatch(/API key that created case .* can no longer be used: API key has been revoked/);
    expect(Date.parse(String(end.finishedAt))).toBeGreaterThanOrEqual(Date.parse(startAt));
    expect(await executedNodes(t, caseId)).toEqual([]);
  });

  it('a queued case ends FAILED when its slot comes, while the case already running finishes', async () => {
    const t = await tenant();
    const cap = await svc.admin('PUT', `/admin/organizations/${t.organizationId}/concurrency`, {
      maxConcurrentCases: 1,
    });
    expect(cap.status, cap.text).toBe(200);
    const workflowId = await saveWorkflow(t, sleeper(2), 'queued');
    const running = await start(t, workflowId);
    const queued = await start(t, workflowId);
    expect([running.status, queued.status]).toEqual(['RUNNING', 'QUEUED']);
    await t.revoke();
    // A run that began before the revocation is not stopped by it (as an execute already answered).
    expect((await ended(t, running.caseId)).status).toBe('COMPLETED');
    const end = await ended(t, queued.caseId);
    expect(end.status).toBe('FAILED');
    expect(end.error?.message).toMatch(/API key has been revoked/);
    expect(await executedNodes(t, queued.caseId)).toEqual([]);
  });

  it('a call_workflow child is never written: the parent fails at the call node, naming the key', async () => {
    const t = await tenant();
    const childId = await saveWorkflow(t, echo(), 'child');
    const g = new Graph();
    const text = [{ name: 'text' }];
    const input = g.input(text);
    // Long enough to revoke the key before the call node runs.
    const wait = g.python(
      'Wait',
      'import time\ndef main(inputs):\n    time.sleep(4)\n    return inputs\n',
      text,
      text,
      {
        execution: { timeout_ms: 30_000 },
      },
    );
    const call = g.node({
      name: 'Call',
      type: 'subworkflow',
      handler_class: 'call_workflow',
      process: { workflow_id: childId },
      input_schema: vars(text),
      output_schema: vars(text),
    });
    g.chain(input, wait, call, g.output(text));
    const { caseId } = await start(t, await saveWorkflow(t, g, 'parent'));
    await t.revoke();
    const end = await ended(t, caseId);
    expect(end.status).toBe('FAILED');
    expect(end.error?.message).toMatch(/Call failed: The API key that created case .* API key has been revoked/);
    const audit = await answered(t.reader.GET('/api/v1/case/{caseId}/audit', { params: { path: { caseId } } }), 200);
    expect(audit.audit.nodes_execution_data[call]).toMatchObject({ status: 'failed' });
    expect(audit.audit.nodes_execution_data[call]?.child_case_id ?? null).toBeNull();
    const children = await answered(
      t.reader.GET('/api/v1/case', { params: { query: { workflowId: childId, limit: 10 } } }),
      200,
    );
    expect(children.cases).toEqual([]);
  });
});
