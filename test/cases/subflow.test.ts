import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFor, newCaller, newWorkspace } from '../support/keys.js';
import { answered, refused, startTestService, type TestService } from '../support/harness.js';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres.js';
import { audit, caseStatus, createWorkflow, results, startCase, waitForEnd } from './support.js';
import { Graph, py, sleeper, textChain, vars, type Var } from '../support/graphs.js';

/** Sub-workflows: the call_workflow node kind (src/domain/node-kinds/call-workflow.ts, workflows/child-case.ts). */

const MAX_DEPTH = 2;
let svc: TestService;
/** A key of another organization, and the id of a workspace of it. */
let otherOrg: { key: string; workspaceId: string };

beforeAll(async () => {
  // A child case may wait 1 s for its parent to start its run before the reconciler looks at it.
  svc = await startTestService({ config: { cases: { maxCallDepth: MAX_DEPTH, resumeUnstartedAfterMs: 1000 } } });
  otherOrg = await newCaller(svc, ['case:full', 'workflow:full']);
});
afterAll(async () => {
  await svc?.stop();
});

/** input(text) → call_workflow(text → text, or `outputs`) → output(text) */
function caller(process: Record<string, unknown>, outputs: Var[] = [{ name: 'text' }]): Graph {
  const g = new Graph();
  const input = g.input([{ name: 'text' }]);
  const call = g.node({
    name: 'Call',
    type: 'subworkflow',
    handler_class: 'call_workflow',
    process,
    input_schema: vars([{ name: 'text' }]),
    output_schema: vars(outputs),
  });
  const output = g.output([{ name: 'text' }]);
  g.edge(input, call);
  g.edge(call, output);
  return g;
}

function callNodeId(g: Graph): string {
  const id = Object.values(g.nodes).find((n) => n.handler_class === 'call_workflow')?.id;
  if (!id) throw new Error('no call node');
  return id;
}

/** Saves a workflow; the answer is read by the test (the saves here are refused). */
function save(g: Graph, name: string, client = svc.client, workspaceId = svc.workspaceId) {
  return client.POST('/api/v1/workflow', {
    params: { header: { 'x-workspace-id': workspaceId } },
    body: { name, activeStatus: 'active', nodes: g.nodes, edges: g.edges },
  });
}

function update(workflowId: string, g: Graph) {
  return svc.client.PATCH('/api/v1/workflow/{workflowId}', {
    params: { path: { workflowId } },
    body: { nodes: g.nodes, edges: g.edges },
  });
}

/** The child case a parent's call node started, once the audit shows it (live from the run, or recorded). */
async function childOf(parentCaseId: string, nodeId: string, on = svc): Promise<string> {
  const until = Date.now() + 20_000;
  for (;;) {
    const child = (await audit(on, parentCaseId)).audit.nodes_execution_data[nodeId]?.child_case_id;
    if (child) return child;
    if (Date.now() > until) throw new Error(`case ${parentCaseId} started no child`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A parent case whose call node runs a child that sleeps 20 s, once the child has started. */
async function parentOfSleeper(
  on = svc,
  executeExtra: Record<string, unknown> = {},
): Promise<{ caseId: string; childId: string; nodeId: string }> {
  const g = caller({ workflow_id: (await createWorkflow(on, sleeper(20))).workflowId });
  const parent = await createWorkflow(on, g, 'parent of sleeper');
  const caseId = await startCase(on, parent.workflowId, { text: 'x' }, executeExtra);
  const nodeId = callNodeId(g);
  return { caseId, childId: await childOf(caseId, nodeId, on), nodeId };
}

describe('call_workflow: running a child case', () => {
  it("runs the callee as a child case whose results become the node's outputs", async () => {
    const callee = await createWorkflow(svc, textChain('Shout', py('return {"text": inputs["text"].upper() + "!"}')));
    const g = caller({ workflow_id: callee.workflowId });
    const parent = await createWorkflow(svc, g, 'parent');
    const caseId = await startCase(svc, parent.workflowId, { text: 'hello' });
    expect((await waitForEnd(svc, caseId)).status).toBe('COMPLETED');
    expect((await results(svc, caseId)).text?.value).toBe('HELLO!');

    const node = (await audit(svc, caseId)).audit.nodes_execution_data[callNodeId(g)];
    expect(node).toMatchObject({ status: 'completed', handler_class: 'call_workflow', outputs: { text: 'HELLO!' } });
    const childId = String(node?.child_case_id);
    const child = await caseStatus(svc, childId);
    expect(child).toMatchObject({
      status: 'COMPLETED',
      workflowId: callee.workflowId,
      parentCase: { caseId, nodeId: callNodeId(g) },
    });
    expect((await results(svc, childId)).text?.value).toBe('HELLO!');
    expect((await caseStatus(svc, caseId)).parentCase).toBeNull();

    // Temporal: the child run is the parent run's child, with the parent case in its memo.
    const described = await svc.service.context.temporal.client.workflow.getHandle(`case-${childId}`).describe();
    expect(described.parentExecution?.workflowId).toBe(`case-${caseId}`);
    expect(described.memo).toMatchObject({ parentCaseId: caseId, parentNodeId: callNodeId(g) });
    // Its workflow-task timeout is its parent's (temporal.caseWorkflowTaskTimeoutMs), not Temporal's 10 s.
    expect(Number(described.raw.executionConfig?.defaultWorkflowTaskTimeout?.seconds)).toBe(60);
    // …and found by Temporal's own ParentWorkflowId search attribute (visibility lags a little).
    const children: string[] = [];
    for (const until = Date.now() + 10_000; children.length === 0 && Date.now() < until;) {
      const query = `ParentWorkflowId = 'case-${caseId}'`;
      for await (const run of svc.service.context.temporal.client.workflow.list({ query }))
        children.push(run.workflowId);
      if (children.length === 0) await new Promise((r) => setTimeout(r, 200));
    }
    expect(children).toEqual([`case-${childId}`]);
  });

  it("fails the node with the child's error when the child fails", async () => {
    const callee = await createWorkflow(svc, textChain('Boom', py('raise ValueError("no such customer")')));
    const g = caller({ workflow_id: callee.workflowId });
    const parent = await createWorkflow(svc, g, 'parent of failing');
    const caseId = await startCase(svc, parent.workflowId, { text: 'x' });
    const end = await waitForEnd(svc, caseId);
    expect(end.status).toBe('FAILED');
    expect((end.error as { message: string }).message).toContain('no such customer');
    const node = (await audit(svc, caseId)).audit.nodes_execution_data[callNodeId(g)];
    expect(node?.status).toBe('failed');
    expect(node?.error?.kind).toBe('child_failed');
    expect(node?.error?.message).toContain(`Sub-workflow case ${String(node?.child_case_id)} failed`);
    expect((await caseStatus(svc, String(node?.child_case_id))).status).toBe('FAILED');
  });

  it('cancels the child when the parent is cancelled', async () => {
    const { caseId, childId, nodeId } = await parentOfSleeper();
    await answered(svc.client.POST('/api/v1/case/{caseId}/cancel', { params: { path: { caseId } } }), 200);
    expect((await waitForEnd(svc, caseId)).status).toBe('CANCELLED');
    expect((await waitForEnd(svc, childId)).status).toBe('CANCELLED');
    const node = (await audit(svc, caseId)).audit.nodes_execution_data[nodeId];
    expect(node?.status).toBe('cancelled');
  });

  it('fails the node when the child is cancelled on its own', async () => {
    const { caseId, childId, nodeId } = await parentOfSleeper();
    await answered(svc.client.POST('/api/v1/case/{caseId}/cancel', { params: { path: { caseId: childId } } }), 200);
    expect((await waitForEnd(svc, childId)).status).toBe('CANCELLED');
    expect((await waitForEnd(svc, caseId)).status).toBe('FAILED');
    const node = (await audit(svc, caseId)).audit.nodes_execution_data[nodeId];
    expect(node?.error).toEqual({ message: `Sub-workflow case ${childId} was cancelled`, kind: 'child_cancelled' });
  });

  it('fails the node when the child run is terminated, and the reconciler closes the child case', async () => {
    const { caseId, childId, nodeId } = await parentOfSleeper();
    await svc.service.context.temporal.client.workflow.getHandle(`case-${childId}`).terminate('operator');
    expect((await waitForEnd(svc, caseId)).status).toBe('FAILED');
    const node = (await audit(svc, caseId)).audit.nodes_execution_data[nodeId];
    expect(node?.error).toEqual({ message: `Sub-workflow case ${childId} was terminated`, kind: 'child_terminated' });
    // The terminated run never wrote its row (nor linked its run): the reconciler closes it once past the grace.
    expect((await caseStatus(svc, childId)).status).toBe('RUNNING');
    await new Promise((r) => setTimeout(r, 1000));
    await svc.service.context.services.caseReconciler.reconcile();
    expect(await caseStatus(svc, childId)).toMatchObject({
      status: 'FAILED',
      error: { message: 'The case run was terminated in Temporal' },
    });
  });

  // Whichever deadline timer fires first (the child's starts a little later, with what was left), the parent times out.
  it.each([1, 2, 3])("bounds the child by the parent's remaining deadline (run %i)", async () => {
    const { caseId, childId, nodeId } = await parentOfSleeper(svc, { timeoutMs: 3000 });
    expect((await waitForEnd(svc, caseId)).status).toBe('TIMED_OUT');
    const child = await waitForEnd(svc, childId);
    // Its own deadline (at most the parent's remaining 3 s) or the parent's end stopped it, before its 20 s sleep was over.
    expect(['TIMED_OUT', 'CANCELLED']).toContain(child.status);
    expect(Date.parse(String(child.finishedAt)) - Date.parse(String(child.startedAt))).toBeLessThan(20_000);
    const node = (await audit(svc, caseId)).audit.nodes_execution_data[nodeId];
    expect(node).toMatchObject({ status: 'cancelled', child_case_id: childId });
  });

  it('fails the node clearly when the callee was deactivated since the save', async () => {
    const callee = await createWorkflow(svc, textChain('Echo', py('return {"text": inputs["text"]}')));
    const g = caller({ workflow_id: callee.workflowId });
    const parent = await createWorkflow(svc, g, 'parent of deactivated');
    await answered(
      svc.client.POST('/api/v1/workflow/{workflowId}/deactivate', {
        params: { path: { workflowId: callee.workflowId } },
      }),
      200,
    );
    const caseId = await startCase(svc, parent.workflowId, { text: 'x' });
    const end = await waitForEnd(svc, caseId);
    expect(end.status).toBe('FAILED');
    const node = (await audit(svc, caseId)).audit.nodes_execution_data[callNodeId(g)];
    expect(node?.error).toMatchObject({ kind: 'configuration' });
    expect(node?.error?.message).toContain('has no active version');
    expect(node?.child_case_id).toBeNull();
  });

  it('runs a pinned version whatever is active', async () => {
    const callee = await createWorkflow(svc, textChain('V1', py('return {"text": "v1"}')));
    await answered(update(callee.workflowId, textChain('V2', py('return {"text": "v2"}'))), 200);
    const parent = await createWorkflow(svc, caller({ workflow_id: callee.workflowId, version_number: 1 }), 'pinned');
    const caseId = await startCase(svc, parent.workflowId, { text: 'x' });
    expect((await waitForEnd(svc, caseId)).status).toBe('COMPLETED');
    expect((await results(svc, caseId)).text?.value).toBe('v1');
  });
});

describe('call_workflow: checks at save', () => {
  it('refuses an unknown callee; another organization’s or another workspace’s workflow reads as unknown', async () => {
    const ours = await createWorkflow(svc, textChain('Echo', py('return {"text": inputs["text"]}')));
    const g = caller({ workflow_id: ours.workflowId });
    const foreign = await refused(save(g, 'attacker', clientFor(svc, otherOrg.key), otherOrg.workspaceId), 400);
    const nextDoor = await refused(save(g, 'next door', svc.client, await newWorkspace(svc)), 400);
    const unknown = await refused(save(caller({ workflow_id: crypto.randomUUID() }), 'unknown'), 400);
    for (const r of [foreign, nextDoor, unknown]) {
      expect(r.errorCode).toBe('VALIDATION_ERROR');
      expect(r.message).toMatch(/process\.workflow_id: workflow .+ does not exist in this workspace/);
    }
    expect(JSON.stringify(foreign)).not.toContain('Echo');
  });

  it("refuses node outputs the callee's results do not have", async () => {
    const callee = await createWorkflow(svc, textChain('Echo', py('return {"text": inputs["text"]}')), 'Echo');
    const g = caller({ workflow_id: callee.workflowId }, [{ name: 'text' }, { id: 'n', name: 'count', type: 'int' }]);
    const call = callNodeId(g);
    const r = await refused(save(g, 'wrong outputs'), 400);
    expect(r.message).toBe(
      `Invalid workflow graph: nodes.${call}.output_schema.schema.n: workflow Echo has no result count`,
    );
  });

  it('refuses a cycle, naming its path', async () => {
    const a = await createWorkflow(svc, textChain('Echo', py('return {"text": inputs["text"]}')), 'A');
    const b = await createWorkflow(svc, caller({ workflow_id: a.workflowId }), 'B');
    const back = await refused(update(a.workflowId, caller({ workflow_id: b.workflowId })), 400);
    expect(back.message).toContain('Calls recurse: A -> B -> A');
    const self = await refused(update(a.workflowId, caller({ workflow_id: a.workflowId })), 400);
    expect(self.message).toContain('Calls recurse: A -> A');
  });

  it(`refuses calls nesting deeper than cases.maxCallDepth (${MAX_DEPTH})`, async () => {
    const leaf = await createWorkflow(svc, textChain('Echo', py('return {"text": inputs["text"]}')), 'L0');
    const one = await createWorkflow(svc, caller({ workflow_id: leaf.workflowId }), 'L1');
    const two = await createWorkflow(svc, caller({ workflow_id: one.workflowId }), 'L2');
    const three = await refused(save(caller({ workflow_id: two.workflowId }), 'L3'), 400);
    expect(three.message).toContain(`Calls nest 3 cases deep, over the limit of ${MAX_DEPTH}`);
    expect(three.message).toContain('L3 -> L2 -> L1 -> L0');
    // Two deep is allowed, and runs.
    const caseId = await startCase(svc, two.workflowId, { text: 'deep' });
    expect((await waitForEnd(svc, caseId)).status).toBe('COMPLETED');
    expect((await results(svc, caseId)).text?.value).toBe('deep');
  });
});

describe('call_workflow on Postgres', () => {
  let pg: TestService;
  let schema: PostgresSchema;
  beforeAll(async () => {
    schema = await createPostgresSchema();
    pg = await startTestService({ databaseUrl: schema.url, config: { cases: { resumeUnstartedAfterMs: 1000 } } });
    expect(pg.service.context.store.dialect).toBe('postgres');
  });
  afterAll(async () => {
    await pg?.stop();
    await schema?.drop();
  });

  it('records a child case with its parent, and closes a child whose run was terminated', async () => {
    const shout = await createWorkflow(pg, textChain('Shout', py('return {"text": inputs["text"].upper()}')));
    const g = caller({ workflow_id: shout.workflowId });
    const parent = await createWorkflow(pg, g, 'parent');
    const caseId = await startCase(pg, parent.workflowId, { text: 'pg' });
    expect((await waitForEnd(pg, caseId)).status).toBe('COMPLETED');
    const childId = String((await audit(pg, caseId)).audit.nodes_execution_data[callNodeId(g)]?.child_case_id);
    expect(await caseStatus(pg, childId)).toMatchObject({
      status: 'COMPLETED',
      parentCase: { caseId, nodeId: callNodeId(g) },
    });

    const { caseId: waiting, childId: stuck } = await parentOfSleeper(pg);
    await pg.service.context.temporal.client.workflow.getHandle(`case-${stuck}`).terminate('operator');
    expect((await waitForEnd(pg, waiting)).status).toBe('FAILED');
    await new Promise((r) => setTimeout(r, 1000));
    await pg.service.context.services.caseReconciler.reconcile();
    expect((await caseStatus(pg, stuck)).status).toBe('FAILED');
  });
});
