import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refused, startTestService, type TestService } from '../support/harness.js';
import { audit, createWorkflow, results, startCase, waitForEnd } from '../cases/support.js';
import { routedGraph } from '../support/branch-kind.js';

/**
 * A kind added in a test fixture (one module, test/support/branch-kind.ts)
 * is validated on save and runs in cases: the prebuilt workflow bundle does
 * not know it, so the runNode activity runs it.
 */
describe('a node kind registered in one module', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => {
    await svc?.stop();
  });

  async function saveRouted(): Promise<ReturnType<typeof routedGraph> & { workflowId: string }> {
    const routed = routedGraph();
    const { workflowId } = await createWorkflow(svc, routed.g, 'throwaway kind');
    return { ...routed, workflowId };
  }

  it('routes a case through it', async () => {
    const wf = await saveRouted();
    const longText = await startCase(svc, wf.workflowId, { text: 'longer than three' });
    expect((await waitForEnd(svc, longText)).status).toBe('COMPLETED');
    expect(await results(svc, longText)).toEqual({ result: { value: 'done', type: 'str', displayName: 'result' } });
    const taken = await audit(svc, longText);
    expect(taken.audit.nodes_execution_data[wf.branch]).toMatchObject({
      status: 'completed',
      attempts: 1,
      outputs: { big: true },
    });
    expect(taken.audit.nodes_execution_data[wf.branch]?.logs.map((l) => l.message)).toEqual(['threshold 3']);
    expect(taken.audit.nodes_execution_data[wf.a]?.status).toBe('completed');
    expect(taken.audit.nodes_execution_data[wf.b]?.status).toBe('skipped');

    const shortText = await startCase(svc, wf.workflowId, { text: 'ab' });
    expect((await waitForEnd(svc, shortText)).status).toBe('COMPLETED');
    const other = await audit(svc, shortText);
    expect(other.audit.nodes_execution_data[wf.a]?.status).toBe('skipped');
    expect(other.audit.nodes_execution_data[wf.b]?.status).toBe('completed');
  });

  it('refuses a process its schema rejects when the workflow is saved', async () => {
    const { g, a } = routedGraph();
    const node = g.nodes[a];
    if (!node) throw new Error('node A missing');
    node.process = { threshold: 'three' };
    const r = await refused(
      svc.client.POST('/api/v1/workflow', {
        params: { header: { 'x-workspace-id': svc.workspaceId } },
        body: { name: 'bad', ...g.body() },
      }),
      400,
    );
    expect(JSON.stringify(r)).toContain(`nodes.${a}.process.threshold`);
  });
});
