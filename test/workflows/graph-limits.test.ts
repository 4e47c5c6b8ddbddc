import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphLimits } from '../../src/domain/graph-validation.js';
import { startTestService, type TestService } from '../support/harness.js';
import { Graph } from '../support/graphs.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ config: { bodyLimit: '8mb' } });
});
afterAll(async () => {
  await svc?.stop();
});

/** input → `middle` condition nodes in a chain → output */
function chain(middle: number): Graph {
  const g = new Graph();
  let previous = g.input([{ name: 'text' }]);
  for (let i = 0; i < middle; i++) {
    const next = g.node({ name: `step ${i}`, type: 'condition', handler_class: 'condition', process: { routes: {} } });
    g.edge(previous, next);
    previous = next;
  }
  g.edge(previous, g.output([{ name: 'text' }]));
  return g;
}

/** The status and error body of saving the graph. */
async function save(g: Graph): Promise<{ status: number; text: string }> {
  const { response, error } = await svc.client.POST('/api/v1/workflow', {
    params: { header: { 'x-workspace-id': svc.workspaceId } },
    body: { name: 'big', nodes: g.nodes, edges: g.edges },
  });
  return { status: response.status, text: JSON.stringify(error) };
}

describe('graph size limits at save', () => {
  it('refuses a graph over the node limit with 400 naming the limit', async () => {
    const res = await save(chain(graphLimits.maxNodes));
    expect(res.status, res.text.slice(0, 300)).toBe(400);
    expect(res.text).toContain(`At most ${graphLimits.maxNodes} nodes`);
  });

  it('refuses a graph over the byte limit with 400', async () => {
    const g = chain(1);
    const [first] = Object.values(g.nodes);
    if (first) first.process = { padding: 'x'.repeat(graphLimits.maxBytes) };
    const res = await save(g);
    expect(res.status, res.text.slice(0, 300)).toBe(400);
    expect(res.text).toContain('bytes as JSON');
  });
});
