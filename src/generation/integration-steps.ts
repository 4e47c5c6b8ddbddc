import type { WorkflowGraph, WorkflowNode } from '../domain/graph.js';
import { integrationActionKind } from '../domain/node-kinds/integration-action.js';
import { handlerClassName } from '../domain/vocabulary.js';
import type { IntegrationBinding } from './process-types.js';

/**
 * Integration steps of a plan: a step of kind "integration" runs the action
 * of a connection the run was offered (process-source.ts) as an
 * integration_action node.
 */
export function integrationProcess(
  binding: IntegrationBinding,
): Pick<WorkflowNode, 'type' | 'handler_class' | 'process'> {
  return {
    type: integrationActionKind.nodeType,
    handler_class: integrationActionKind.handlerClass,
    process: { connection_id: binding.connectionId, action_version_id: binding.actionVersionId },
  };
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

/**
 * The graph the reviewer dry-runs: the same, except that integration actions
 * return sample values of their declared outputs instead of calling the
 * connected system. A dry run with sample inputs must never pay a supplier or
 * send an e-mail; the action itself is what a person tested when connecting.
 */
export function dryRunGraph(graph: WorkflowGraph): WorkflowGraph | undefined {
  const actions = Object.entries(graph.nodes).filter(
    ([, node]) => handlerClassName(node) === integrationActionKind.handlerClass,
  );
  if (actions.length === 0) return undefined;
  const nodes = { ...graph.nodes };
  for (const [id, node] of actions) {
    const outputs = Object.fromEntries(
      Object.values(node.output_schema?.schema ?? {}).map((v) => [
        v.variable_name,
        sampleByType[v.allowed_types[0]?.type ?? 'str'] ?? null,
      ]),
    );
    nodes[id] = {
      ...node,
      type: 'code',
      handler_class: 'python_code',
      process: {
        source: `import json\n\n\ndef main(inputs):\n    return json.loads(${JSON.stringify(JSON.stringify(outputs))})\n`,
      },
    };
  }
  return { ...graph, nodes };
}
