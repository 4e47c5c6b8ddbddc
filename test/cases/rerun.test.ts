import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PythonRunnerPool } from '../../src/python/pool.js';
import { searchAttributes } from '../../src/temporal/contracts/search-attributes.js';
import type { CaseflowClient, paths } from '../../src/client/index.js';
import { clientFor, newCaller, newKey } from '../support/keys.js';
import { answered, refused, startTestService, type TestService } from '../support/harness.js';
import { audit, caseStatus, createWorkflow, execute, initiate, results, startCase, waitForEnd } from './support.js';
import { Graph, py, vars } from '../support/graphs.js';

let svc: TestService;
/** Clients of another organization and of a member who may only read. */
let otherOrg: CaseflowClient;
let readOnly: CaseflowClient;
beforeAll(async () => {
  svc = await startTestService();
  otherOrg = clientFor(svc, (await newCaller(svc, ['case:full', 'workflow:full'])).key);
  readOnly = clientFor(svc, (await newKey(svc, ['case:read', 'workflow:read'])).key);
});
afterAll(async () => {
  await svc?.stop();
});

/** The third step fails while `a` is over 10 (the bug); the fix lets it through. */
const buggyStep3 = py(
  'if inputs["n"] > 10:\n    raise ValueError("step 3 cannot take " + str(inputs["n"]))\nreturn {"n": inputs["n"] + 3}',
);
const fixedStep3 = py('return {"n": inputs["n"] + 3}');

/** input(a) → step1 (+1) → step2 (*2) → step3 → step4 (+4) → output(n): four Python nodes. */
function fourSteps(step3: string): { graph: Graph; ids: Record<string, string> } {
  const graph = new Graph();
  const n = [{ name: 'n', type: 'int' as const }];
  const ids = {
    input: graph.input([{ name: 'n', type: 'int' }]),
    step1: graph.python('Step 1', py('return {"n": inputs["n"] + 1}'), n, n),
    step2: graph.python('Step 2', py('return {"n": inputs["n"] * 2}'), n, n),
    step3: graph.python('Step 3', step3, n, n),
    step4: graph.python('Step 4', py('return {"n": inputs["n"] + 4}'), n, n),
    output: graph.output(n),
  };
  const order = Object.values(ids);
  for (let i = 1; i < order.length; i++) graph.edge(order[i - 1] as string, order[i] as string);
  return { graph, ids };
}

/** Python calls made while `fn` runs (every node attempt is one). */
async function pythonCalls<T>(fn: () => Promise<T>): Promise<{ result: T; calls: number }> {
  const spy = vi.spyOn(PythonRunnerPool.prototype, 'run');
  try {
    const result = await fn();
    return { result, calls: spy.mock.calls.length };
  } finally {
    spy.mockRestore();
  }
}

async function failedCase(): Promise<{
  workflowId: string;
  caseId: string;
  ids: Record<string, string>;
  graph: Graph;
}> {
  const { graph, ids } = fourSteps(buggyStep3);
  const { workflowId } = await createWorkflow(svc, graph, 'rerun');
  const caseId = await startCase(svc, workflowId, { n: 5 });
  expect((await waitForEnd(svc, caseId)).status).toBe('FAILED');
  return { workflowId, caseId, ids, graph };
}

/** Saves a new active version of the workflow with these nodes and edges. */
async function newVersion(workflowId: string, graph: Pick<Graph, 'nodes' | 'edges'>): Promise<void> {
  await answered(
    svc.client.PATCH('/api/v1/workflow/{workflowId}', {
      params: { path: { workflowId } },
      body: { nodes: graph.nodes, edges: graph.edges, activeStatus: 'active' },
    }),
    200,
  );
}

type RerunBody = NonNullable<
  paths['/api/v1/case/{caseId}/rerun']['post']['requestBody']
>['content']['application/json'];

function rerun(caseId: string, body: RerunBody, client = svc.client) {
  return client.POST('/api/v1/case/{caseId}/rerun', { params: { path: { caseId } }, body });
}

describe('rerun', () => {
  it('reruns from the failed node on the original version: only the failed node and what follows run', async () => {
    const { caseId, ids } = await failedCase();
    const { result: rerunId, calls } = await pythonCalls(async () => {
      const started = await answered(
        svc.client.POST('/api/v1/case/{caseId}/rerun', {
          params: { path: { caseId } },
          body: { from: 'failed', version: 'original', inputs: { n: 4 } },
        }),
        201,
      );
      expect(started).toMatchObject({ rerunOf: caseId, rerunFrom: 'failed' });
      expect(started.caseId).not.toBe(caseId);
      // The input override reaches the rerun's entry node, but not the reused steps: they keep their outputs.
      expect((await waitForEnd(svc, started.caseId)).status).toBe('FAILED');
      return started.caseId;
    });
    // Step 3 (still buggy: 12 > 10) ran and failed; steps 1 and 2 did not run again.
    expect(calls).toBe(1);
    const record = await audit(svc, rerunId);
    const nodes = record.audit.nodes_execution_data;
    expect(nodes[ids.step1 as string]).toMatchObject({
      status: 'completed',
      attempts: 0,
      outputs: { n: 6 },
      reused: { case_id: caseId, node_id: ids.step1 },
    });
    expect(nodes[ids.step2 as string]?.reused).toEqual({ case_id: caseId, node_id: ids.step2 });
    expect(nodes[ids.step3 as string]).toMatchObject({ status: 'failed', reused: null, inputs: { n: 12 } });
    expect(record.executed_nodes).toEqual([ids.input, ids.step3]);

    const original = await answered(
      svc.client.GET('/api/v1/case/{caseId}/status', { params: { path: { caseId } } }),
      200,
    );
    expect(original).toMatchObject({ rerunOf: null, rerunFrom: null, reruns: [rerunId] });
    const again = await answered(
      svc.client.GET('/api/v1/case/{caseId}/status', { params: { path: { caseId: rerunId } } }),
      200,
    );
    expect(again).toMatchObject({ rerunOf: caseId, rerunFrom: 'failed', reruns: [] });
    // The Temporal UI finds the reruns of a case by its id.
    const run = await svc.service.context.temporal.client.workflow.getHandle(`case-${rerunId}`).describe();
    expect(run.typedSearchAttributes.get(searchAttributes.rerunOf)).toBe(caseId);
  });

  it('reruns on the latest version after the failing node was fixed: completes, running two nodes', async () => {
    const { workflowId, caseId, ids, graph } = await failedCase();
    const step3 = ids.step3 as string;
    const step3Node = graph.nodes[step3] as Graph['nodes'][string];
    await newVersion(workflowId, {
      nodes: { ...graph.nodes, [step3]: { ...step3Node, process: { source: fixedStep3 } } },
      edges: graph.edges,
    });
    const { result: rerunId, calls } = await pythonCalls(async () => {
      const r = await answered(rerun(caseId, { from: 'failed', version: 'latest' }), 201);
      expect(r.workflowVersionNumber).toBe(2);
      expect((await waitForEnd(svc, r.caseId)).status).toBe('COMPLETED');
      return r.caseId;
    });
    expect(calls).toBe(2);
    // 5 → 6 → 12 (reused) → 15 → 19
    expect(await results(svc, rerunId)).toMatchObject({ n: { value: 19 } });
    const record = await audit(svc, rerunId);
    expect(record.executed_nodes).toEqual([ids.input, ids.step3, ids.step4, ids.output]);
  });

  it('reruns from the start: every node runs again, with the overrides', async () => {
    const { caseId } = await failedCase();
    const { result: status, calls } = await pythonCalls(async () => {
      const r = await answered(rerun(caseId, { from: 'start', inputs: { n: 1 } }), 201);
      return waitForEnd(svc, r.caseId);
    });
    // 1 → 2 → 4 → 7 → 11: all four steps ran.
    expect(status.status).toBe('COMPLETED');
    expect(calls).toBe(4);
  });

  it('reruns a case initiated and executed as a job', async () => {
    const { graph } = fourSteps(buggyStep3);
    const { workflowId } = await createWorkflow(svc, graph, 'rerun job');
    const init = await answered(svc.client.POST('/job/initiate', { body: { workflowId } }), 201);
    const jobId = init.jobExecutionId;
    await answered(svc.client.POST('/job/execute', { body: { jobExecutionId: jobId, inputs: { n: 5 } } }), 202);
    expect((await waitForEnd(svc, jobId, 45_000, '/job')).status).toBe('FAILED');
    const r = await answered(rerun(jobId, { from: 'failed' }), 201);
    expect((await waitForEnd(svc, r.caseId)).status).toBe('FAILED');
    expect((await caseStatus(svc, jobId, '/job')).reruns).toEqual([r.caseId]);
  });

  it('refuses what it cannot do honestly, changing nothing', async () => {
    const { workflowId, caseId, ids, graph } = await failedCase();
    const running = await startCase(svc, workflowId, { n: 1 });
    const pending = await initiate(svc, { workflowId });
    const completed = await startCase(svc, workflowId, { n: 1 });
    expect((await waitForEnd(svc, completed)).status).toBe('COMPLETED');

    const notEnded = await refused(rerun(pending, { from: 'start' }), 409);
    expect(notEnded.message).toContain('has not ended');
    const didNotFail = await refused(rerun(completed, { from: 'failed' }), 409);
    expect(didNotFail.message).toContain('did not fail');
    expect((await waitForEnd(svc, running)).status).toBe('COMPLETED');

    const badInput = await refused(rerun(caseId, { from: 'failed', inputs: { n: 'five' } }), 400);
    expect(badInput.metadata).toMatchObject({ fields: [{ field: 'body.inputs.n' }] });
    await refused(rerun(caseId, { from: 'start', inputs: { m: 1 } }), 400);
    // A from the document does not have.
    const badBody = await svc.request('POST', `/api/v1/case/${caseId}/rerun`, { body: { from: 'middle' } });
    expect(badBody.status).toBe(400);

    // The latest version lost step 2 and changed step 1's output type: both named.
    const step1 = ids.step1 as string;
    const step2 = ids.step2 as string;
    const { [step2]: _dropped, ...kept } = graph.nodes;
    const changed = new Graph();
    changed.nodes = {
      ...kept,
      [step1]: { ...(kept[step1] as Graph['nodes'][string]), output_schema: vars([{ name: 'n', type: 'str' }]) },
    };
    for (const edge of Object.values(graph.edges))
      if (edge.from_node_id !== step2 && edge.to_node_id !== step2) changed.edge(edge.from_node_id, edge.to_node_id);
    changed.edge(step1, ids.step3 as string);
    await newVersion(workflowId, changed);
    const conflict = await refused(rerun(caseId, { from: 'failed', version: 'latest' }), 409);
    const names = (conflict.metadata as { nodes: Array<{ name: string }> }).nodes.map((n) => n.name);
    expect(names.sort()).toEqual(['Step 1', 'Step 2']);
    // The original version still has both: a rerun there goes on.
    await answered(rerun(caseId, { from: 'failed', version: 'original' }), 201);

    // Nothing of the refusals became a case: only the last rerun is listed.
    expect((await caseStatus(svc, caseId)).reruns).toHaveLength(1);
  });

  it('needs Case: Full, and another organization gets 404', async () => {
    const { caseId } = await failedCase();
    await refused(rerun(caseId, { from: 'failed' }, otherOrg), 404);
    await refused(rerun(caseId, { from: 'failed' }, readOnly), 403);
    expect((await caseStatus(svc, caseId)).reruns).toEqual([]);
    expect((await execute(svc, caseId, { inputs: { n: 1 } })).status).toBe(409);
  });
});
