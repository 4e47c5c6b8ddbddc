import type { WorkflowGraph } from '../domain/graph.js';
import { integrationActionKind } from '../domain/node-kinds/integration-action.js';
import { handlerClassName } from '../domain/vocabulary.js';
import { emptyBuild } from '../domain/generation/builds.js';
import type { Plan, ReviewProblem, StepBuild } from '../domain/generation/plan.js';
import type { IntegrationBinding } from './process-types.js';

/**
 * Integration steps of a plan. Every one is an integration_action step whose
 * build names a tool of the workspace (connection and action version); a
 * step naming an offered integration by key (a discovered process's binding)
 * gets that build here, the others from a builder picking among the tools.
 */
export function boundBuilds(plan: Plan, bindings: IntegrationBinding[]): Record<string, StepBuild> {
  const builds: Record<string, StepBuild> = {};
  for (const step of plan.steps) {
    const tool = bindings.find((b) => step.kind === 'integration_action' && b.key === step.integration)?.tool;
    if (tool)
      builds[step.id] = {
        ...emptyBuild,
        action: { connection_id: tool.connection_id, action_version_id: tool.action_version_id },
      };
  }
  return builds;
}

/** A step naming an integration the run does not offer by key: the architect's to fix. */
export function boundStepProblems(plan: Plan, bindings: IntegrationBinding[]): ReviewProblem[] {
  return plan.steps
    .filter((step) => step.integration !== null && !bindings.some((b) => b.key === step.integration))
    .map((step) => ({
      stepId: step.id,
      message: `Step "${step.name}" names integration ${JSON.stringify(step.integration)}, which is not one of the connected integrations offered`,
    }));
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
