import type { WorkflowNode } from '../../src/domain/graph.js';
import type { VariableSchemaEntry } from '../../src/domain/variables.js';
import { Graph, vars } from '../support/graphs.js';

/** The approval route's id (its bool output is the form's `approved` field). */
const approvedRoute = 'approved';

/**
 * input(amount: float, deadline: date, optional) → human_task "Approve" (form: `approved`, the route's
 * bool, an optional `note` and any `fields`) → output(approved, note), by the route's edge or its complement: the
 * case completes either way and its results show the decision.
 */
export function approvalGraph(
  process: Record<string, unknown>,
  extra: Partial<WorkflowNode> = {},
  /** More fields of the form, besides `approved` and `note` (the output does not read them). */
  fields: VariableSchemaEntry[] = [],
) {
  const graph = new Graph();
  const input = graph.input([
    { name: 'amount', type: 'float' },
    { name: 'deadline', type: 'date', optional: true, nullable: true },
  ]);
  const form = vars([{ name: 'note', type: 'str', nullable: true, optional: true }]);
  form.schema[approvedRoute] = { id: approvedRoute, variable_name: 'approved', allowed_types: [{ type: 'bool' }] };
  for (const field of fields) form.schema[field.id] = field;
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
