import type { WorkflowGraph, WorkflowNode } from '../domain/graph.js';
import { callWorkflowKind } from '../domain/node-kinds/call-workflow.js';
import { humanTaskKind } from '../domain/node-kinds/human-task.js';
import { integrationActionKind } from '../domain/node-kinds/integration-action.js';
import type { VariableSchemaEntry } from '../domain/variables.js';
import { handlerClassName } from '../domain/vocabulary.js';

/** What the reviewer dry-runs, and what it ran in place of the real thing (said in the reviewer's task result). */
export interface DryRunGraph {
  graph: WorkflowGraph;
  notes: string[];
}

const sampleByType: Record<string, unknown> = {
  str: 'sample',
  int: 1,
  float: 1.5,
  bool: true,
  date: '2024-01-31',
  array: [],
  object: {},
};

const sampleOf = (v: VariableSchemaEntry): unknown => sampleByType[v.allowed_types[0]?.type ?? 'str'] ?? null;

/** A code node answering fixed outputs in place of `node` (keeping its name, wiring and routes). */
function answering(node: WorkflowNode, outputs: Record<string, unknown>): WorkflowNode {
  return {
    ...node,
    type: 'code',
    handler_class: 'python_code',
    process: {
      source: `import json\n\n\ndef main(inputs):\n    return json.loads(${JSON.stringify(JSON.stringify(outputs))})\n`,
    },
  };
}

/** The form as a person who takes the first route would send it: the route's field yes, the others their default or empty. */
function firstRouteAnswer(node: WorkflowNode): Record<string, unknown> {
  const routeId = Object.keys(node.routes ?? {})[0];
  return Object.fromEntries(
    Object.values(node.output_schema?.schema ?? {}).map((v) => [
      v.variable_name,
      v.id === routeId ? true : v.default !== undefined ? v.default : v.is_nullable ? null : sampleOf(v),
    ]),
  );
}

const shown = (outputs: Record<string, unknown>) =>
  Object.entries(outputs)
    .map(([name, value]) => `${name} = ${JSON.stringify(value)}`)
    .join(', ');

/**
 * The graph the reviewer dry-runs, when it differs from the graph applied:
 * - integration actions return sample values of their declared outputs: a dry run with sample inputs must
 *   never pay a supplier or send an e-mail (the action is what a person tested when connecting);
 * - a human task is answered at once with the form's first route and defaults, instead of waiting for a person
 *   (a dry run cannot wait days), and the note says which answer was assumed;
 * - a call of another workflow returns sample values of its results: the callee is a real, active workflow
 *   whose steps may act on connected systems, and it was tested on its own.
 */
export function dryRunGraph(graph: WorkflowGraph): DryRunGraph | undefined {
  const nodes = { ...graph.nodes };
  const notes: string[] = [];
  for (const [id, node] of Object.entries(graph.nodes)) {
    const handler = handlerClassName(node);
    const samples = () =>
      Object.fromEntries(Object.values(node.output_schema?.schema ?? {}).map((v) => [v.variable_name, sampleOf(v)]));
    if (handler === integrationActionKind.handlerClass) nodes[id] = answering(node, samples());
    else if (handler === humanTaskKind.handlerClass) {
      const answer = firstRouteAnswer(node);
      nodes[id] = answering(node, answer);
      notes.push(
        `The dry run did not wait for a person at "${node.name}": it assumed the answer ${shown(answer)}; the saved workflow waits for the assignee`,
      );
    } else if (handler === callWorkflowKind.handlerClass) {
      const answer = samples();
      nodes[id] = answering(node, answer);
      notes.push(
        `The dry run did not start workflow ${String(node.process?.workflow_id)} at "${node.name}": it assumed the sample results ${shown(answer) || '(none)'}; the saved workflow runs it as a child case`,
      );
    }
  }
  return Object.keys(nodes).some((id) => nodes[id] !== graph.nodes[id])
    ? { graph: { ...graph, nodes }, notes }
    : undefined;
}
