import type { WorkflowNode } from '../../src/domain/graph.js';
import { Graph, vars } from '../support/graphs.js';

/** The approval route's id (its bool output is the form's `approved` field). */
const approvedRoute = 'approved';

/**
 * input(amount: float, deadline: date, optional) → human_task "Approve" (form: `approved`, the route's
 * bool, and an optional `note`) → output(approved, note), by the route's edge or its complement: the
 * case completes either way and its results show the decision.
 */
export function approvalGraph(process: Record<string, unknown>, extra: Partial<WorkflowNode> = {}) {
  const graph = new Graph();
  const input = graph.input([
    { name: 'amount', type: 'float' },
    { name: 'deadline', type: 'date', optional: true, nullable: true },
  ]);
  const form = vars([{ name: 'note', type: 'str', nullable: true, optional: true }]);
  form.schema[approvedRoute] = { id: approvedRoute, variable_name: 'approved', allowed_types: [{ type: 'bool' }] };
  const task = graph.node({
    name: 'Approve',
    type: 'human_task',
    handler_class: 'human_task',
    input_schema: vars([
      { name: 'amount', type: 'float' },
      { name: 'deadline', type: 'date', optional: true, nullable: true },
    ]),
    output_schema: form,
    routes: { [approvedRoute]: { id: approvedRoute, name: 'Approved' } },
    properties: ['route'],
    process,
    ...extra,
  });
  const output = graph.output([
    { name: 'approved', type: 'bool' },
    { name: 'note', type: 'str', nullable: true, optional: true },
  ]);
  graph.edge(input, task);
  graph.edge(task, output, { route_id: approvedRoute });
  graph.edge(task, output, { route_id: approvedRoute, route_complement: true });
  return { graph, input, task, output };
}
