import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkflowNode } from '../../src/domain/graph.js';
import { codeBody, field, type CodeNodeBody } from '../code/support.js';
import { answered, startTestService, type TestService } from '../support/harness.js';
import { audit, createWorkflow, execute, initiate, results, startCase, waitForEnd } from './support.js';
import { Graph, vars, type Var } from '../support/graphs.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.stop();
});

interface CodeVersionRef {
  codeId: string;
  versionId: string;
}

async function authorCode(body: Partial<CodeNodeBody>): Promise<CodeVersionRef> {
  const { id: codeId, versionId } = await answered(svc.client.POST('/api/v1/code', { body: codeBody(body) }), 201);
  return { codeId, versionId };
}

/**
 * input(count) → catalog code node → output(total). `outputSchema` false
 * leaves the workflow node without an output_schema, so only the catalog
 * version's declaration can check what main returns.
 */
function catalogGraph(
  ref: CodeVersionRef,
  options: { outputSchema?: boolean; extra?: Partial<WorkflowNode> } = {},
): { graph: Graph; codeNode: string } {
  const g = new Graph();
  const count: Var[] = [{ name: 'count', type: 'int' }];
  const input = g.input(count);
  const fields: Omit<WorkflowNode, 'id'> = {
    name: 'Catalog code',
    type: 'code',
    handler_class: 'python_code',
    process: { code_id: ref.codeId, code_version_id: ref.versionId },
    input_schema: vars(count),
    ...(options.outputSchema === false ? {} : { output_schema: vars([{ name: 'total', type: 'int' }]) }),
    ...options.extra,
  };
  const codeNode = g.node(fields);
  const output = g.output([{ name: 'total', type: 'int' }]);
  g.edge(input, codeNode);
  g.edge(codeNode, output);
  return { graph: g, codeNode };
}

describe('catalog code nodes in cases', () => {
  it('runs a pinned code node version; a workflow update pins v2 while the first workflow version still runs v1', async () => {
    const v1 = await authorCode({ sourceCode: "def main(inputs):\n    return {'total': inputs['count'] * 2}\n" });
    const wf = await createWorkflow(svc, catalogGraph(v1).graph, 'catalog v1');
    const first = await startCase(svc, wf.workflowId, { count: 21 });
    expect((await waitForEnd(svc, first)).status).toBe('COMPLETED');
    expect(await results(svc, first)).toEqual({ total: { value: 42, type: 'int', displayName: 'total' } });

    const patched = await answered(
      svc.client.PATCH('/api/v1/code/{codeId}', {
        params: { path: { codeId: v1.codeId } },
        body: { sourceCode: "def main(inputs):\n    return {'total': inputs['count'] * 3}\n" },
      }),
      200,
    );
    expect(patched.versionNumber).toBe(2);
    const v2: CodeVersionRef = { codeId: v1.codeId, versionId: patched.versionId };
    expect(v2.versionId).not.toBe(v1.versionId);

    const g2 = catalogGraph(v2).graph;
    await answered(
      svc.client.PATCH('/api/v1/workflow/{workflowId}', {
        params: { path: { workflowId: wf.workflowId } },
        body: { nodes: g2.nodes, edges: g2.edges, activeStatus: 'active' },
      }),
      200,
    );

    const latest = await answered(svc.client.POST('/api/v1/case', { body: { workflowId: wf.workflowId } }), 201);
    expect(latest.workflowVersionNumber).toBe(2);
    const pinned = await initiate(svc, { workflowId: wf.workflowId, workflowVersionNumber: 1 });
    const latestId = latest.caseId;
    expect((await execute(svc, latestId, { inputs: { count: 10 } })).status).toBe(202);
    expect((await execute(svc, pinned, { inputs: { count: 10 } })).status).toBe(202);
    expect((await waitForEnd(svc, latestId)).status).toBe('COMPLETED');
    expect((await waitForEnd(svc, pinned)).status).toBe('COMPLETED');
    expect((await results(svc, latestId)).total?.value).toBe(30);
    expect((await results(svc, pinned)).total?.value).toBe(20);
  });

  it('fails the case when the code node version has no main', async () => {
    const ref = await authorCode({ sourceCode: "def helper(inputs):\n    return {'total': 1}\n" });
    const { graph, codeNode } = catalogGraph(ref);
    const wf = await createWorkflow(svc, graph, 'no main');
    const caseId = await startCase(svc, wf.workflowId, { count: 1 });
    const status = await waitForEnd(svc, caseId);
    expect(status.status).toBe('FAILED');
    expect(status.error).toMatchObject({ nodeId: codeNode });
    const node = (await audit(svc, caseId)).audit.nodes_execution_data[codeNode];
    expect(node?.status).toBe('failed');
    expect(node?.error?.message).toContain('main(inputs) not defined');
  });

  it("checks main's return value against the catalog version's declared outputs", async () => {
    const ref = await authorCode({
      sourceCode: "def main(inputs):\n    return {'total': 'many'}\n",
      outputs: { total: field('total', ['int']) },
    });
    // No output_schema on the workflow node: the version's declaration alone must catch the str.
    // Three attempts allowed, yet an output mismatch is not retried (the same code returns the same thing).
    const { graph, codeNode } = catalogGraph(ref, { outputSchema: false, extra: { execution: { max_attempts: 3 } } });
    const wf = await createWorkflow(svc, graph, 'bad output type');
    const caseId = await startCase(svc, wf.workflowId, { count: 1 });
    const status = await waitForEnd(svc, caseId);
    expect(status.status).toBe('FAILED');
    const node = (await audit(svc, caseId)).audit.nodes_execution_data[codeNode];
    expect(node?.status).toBe('failed');
    expect(node?.attempts).toBe(1);
    expect(node?.error).toMatchObject({ kind: 'output' });
    expect(node?.error?.message).toContain("output 'total' has type str, expected int");

    const undeclared = await authorCode({ sourceCode: "def main(inputs):\n    return {'total': 1, 'extra': 2}\n" });
    const second = catalogGraph(undeclared, { outputSchema: false });
    const wf2 = await createWorkflow(svc, second.graph, 'undeclared output');
    const case2 = await startCase(svc, wf2.workflowId, { count: 1 });
    expect((await waitForEnd(svc, case2)).status).toBe('FAILED');
    const node2 = (await audit(svc, case2)).audit.nodes_execution_data[second.codeNode];
    expect(node2?.error?.message).toContain("output 'extra' is not a declared output");
  });

  it('fails the node with a configuration error for a version of another code node', async () => {
    const a = await authorCode({});
    const b = await authorCode({});
    const { graph, codeNode } = catalogGraph({ codeId: a.codeId, versionId: b.versionId });
    const wf = await createWorkflow(svc, graph, 'mismatched version');
    const caseId = await startCase(svc, wf.workflowId, { count: 1 });
    expect((await waitForEnd(svc, caseId)).status).toBe('FAILED');
    const node = (await audit(svc, caseId)).audit.nodes_execution_data[codeNode];
    expect(node?.error).toMatchObject({ kind: 'configuration' });
    expect(node?.error?.message).toContain(`has no version ${b.versionId}`);
  });
});
