import { randomUUID } from 'node:crypto';
import type { WorkflowGraph } from './graph.js';

/**
 * The graph of a workflow created without nodes and edges (contract): an input
 * node `Workflow Input` joined by one edge to an output node `Workflow Output`.
 * Both accept new variables, so the caller adds inputs and results later.
 */
export function defaultGraph(): WorkflowGraph {
  const input = randomUUID();
  const output = randomUUID();
  const edge = randomUUID();
  const open = { schema: {}, variable_addition_allowed: true };
  return {
    nodes: {
      [input]: { id: input, name: 'Workflow Input', type: 'input', handler_class: 'input', output_schema: open },
      [output]: { id: output, name: 'Workflow Output', type: 'output', handler_class: 'output', input_schema: open },
    },
    edges: { [edge]: { id: edge, from_node_id: input, to_node_id: output } },
  };
}
