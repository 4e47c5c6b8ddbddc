import { describe, expect, it } from 'vitest';
import { graphLimits, validateGraph } from '../../src/domain/graph-validation.js';
import { Graph, py } from '../support/graphs.js';

/** A code node with one input and one output variable that passes its input on. */
function passNode(g: Graph, name: string): string {
  return g.python(name, py("return {'out': inputs['in']}"), [{ id: 'in', name: 'in' }], [{ id: 'out', name: 'out' }]);
}

/**
 * The largest graph a save accepts: input → two parallel chains (a, b) → output, with forward skip
 * edges inside each chain up to the edge limit. Every node of a maps its input from a's first node
 * (an ancestor as far back as the graph allows); `badMapping` makes a's last node map from b's last
 * node, which is on the other branch: never upstream, however many edges there are.
 */
function maxGraph(badMapping: boolean): { graph: Graph; lastA: string; lastB: string } {
  const g = new Graph();
  const inputVar = 'text';
  const input = g.input([{ id: inputVar, name: 'text' }]);
  const output = g.output([{ name: 'text' }]);
  const chainLength = (graphLimits.maxNodes - 2) / 2;
  const chain = (name: string) => Array.from({ length: chainLength }, (_, i) => passNode(g, `${name} ${i}`));
  const a = chain('a');
  const b = chain('b');
  for (const line of [a, b]) {
    g.edge(input, line[0]!);
    line.forEach((id, i) => {
      if (i > 0) g.edge(line[i - 1]!, id);
    });
    g.edge(line[chainLength - 1]!, output);
  }
  for (let skip = 2; Object.keys(g.edges).length < graphLimits.maxEdges; skip++) {
    for (const line of [a, b]) {
      for (let i = 0; i + skip < chainLength && Object.keys(g.edges).length < graphLimits.maxEdges; i++) {
        g.edge(line[i]!, line[i + skip]!);
      }
    }
  }
  g.nodes[a[0]!]!.variable_mappings = { in: { from_node_id: input, from_variable_id: inputVar } };
  for (const id of a.slice(1))
    g.nodes[id]!.variable_mappings = { in: { from_node_id: a[0]!, from_variable_id: 'out' } };
  for (const id of b) g.nodes[id]!.variable_mappings = { in: { from_node_id: input, from_variable_id: inputVar } };
  const lastA = a[chainLength - 1]!;
  const lastB = b[chainLength - 1]!;
  if (badMapping) g.nodes[lastA]!.variable_mappings = { in: { from_node_id: lastB, from_variable_id: 'out' } };
  return { graph: g, lastA, lastB };
}

describe('graph validation at the size limit', () => {
  it('accepts a 500-node, 2000-edge graph whose mappings all come from ancestors', () => {
    const { graph } = maxGraph(false);
    expect(Object.keys(graph.nodes)).toHaveLength(graphLimits.maxNodes);
    expect(Object.keys(graph.edges)).toHaveLength(graphLimits.maxEdges);
    expect(validateGraph(graph)).toEqual([]);
  });

  it('refuses, in the same graph, a mapping from a node on a parallel branch', () => {
    const { graph, lastA, lastB } = maxGraph(true);
    expect(validateGraph(graph)).toEqual([
      {
        path: `nodes.${lastA}.variable_mappings.in.from_node_id`,
        message: `Node ${lastB} is not upstream of node ${lastA}`,
      },
    ]);
  });

  it('refuses a mapping from a downstream node', () => {
    const g = new Graph();
    const input = g.input([{ name: 'text' }]);
    const firstId = passNode(g, 'first');
    const second = passNode(g, 'second');
    g.nodes[firstId]!.variable_mappings = { in: { from_node_id: second, from_variable_id: 'out' } };
    g.edge(input, firstId);
    g.edge(firstId, second);
    g.edge(second, g.output([{ name: 'text' }]));
    expect(validateGraph(g)).toEqual([
      {
        path: `nodes.${firstId}.variable_mappings.in.from_node_id`,
        message: `Node ${second} is not upstream of node ${firstId}`,
      },
    ]);
  });
});
