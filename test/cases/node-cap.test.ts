import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.js';
import { audit, createWorkflow, peakOverlap, startCase, waitForEnd } from './support.js';
import { Graph, py } from '../support/graphs.js';

/**
 * The per-case cap and the Python queue bound on the real stack, shown by the audit's order of
 * events and the pool's counters: one pool server (4 slots, 3 per organization), one queued call
 * per organization, at most 3 nodes of a case at once.
 */
const CAP = 3;
const PARALLEL = 6;
let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({
    config: { cases: { maxParallelNodes: CAP }, python: { poolSize: 1, maxQueuedPerOrganization: 1 } },
  });
});
afterAll(async () => {
  await svc?.stop();
});

/** input → six parallel Python nodes sleeping 1.5 s → output. */
function fanOut(): { graph: Graph; nodes: string[] } {
  const graph = new Graph();
  const input = graph.input([{ name: 'a', type: 'float' }]);
  const output = graph.output([{ name: 'b0', type: 'float' }]);
  const nodes = Array.from({ length: PARALLEL }, (_, i) => {
    const id = graph.python(
      `P${i}`,
      `import time\n${py(`time.sleep(1.5)\nreturn {"b${i}": inputs["a"] + ${i}}`)}`,
      [{ name: 'a', type: 'float' }],
      [{ name: `b${i}`, type: 'float' }],
    );
    graph.edge(input, id);
    graph.edge(id, output);
    return id;
  });
  return { graph, nodes };
}

describe('bounded parallelism of one tenant', () => {
  it('runs at most the cap of nodes per case; nodes turned away by a full queue wait and complete', async () => {
    const { graph, nodes } = fanOut();
    const wf = await createWorkflow(svc, graph, 'fan out');
    // Three cases at once: 9 calls for 3 organization slots and 1 queue place.
    const cases = await Promise.all([1, 2, 3].map((a) => startCase(svc, wf.workflowId, { a })));
    for (const caseId of cases) expect((await waitForEnd(svc, caseId, 120_000)).status).toBe('COMPLETED');

    for (const caseId of cases) {
      const data = (await audit(svc, caseId)).audit.nodes_execution_data;
      const ran = nodes.map((id) => data[id]);
      // Every node completed on its first attempt: being turned away costs no attempt.
      expect(ran.map((n) => [n?.status, n?.attempts])).toEqual(nodes.map(() => ['completed', 1]));
      const spans = ran.map((n) => ({ start: String(n?.started_at), end: String(n?.finished_at) }));
      expect(peakOverlap(spans)).toBeLessThanOrEqual(CAP);
    }
    // The bursts did meet the queue bound: some calls were refused and retried by the engine.
    expect(svc.service.context.python.stats().shed.organization).toBeGreaterThan(0);
  }, 180_000);
});
