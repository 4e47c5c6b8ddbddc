import type { WorkflowGraph, WorkflowNode } from '../domain/graph.js';
import { callWorkflowKind } from '../domain/node-kinds/call-workflow.js';
import { handlerClassName } from '../domain/vocabulary.js';
import { planVariableTypes, type PlanVariableType } from '../domain/generation/plan.js';
import type { WorkflowRepo } from '../store/workflow-repo.js';

/** Active workflows looked at; a workspace with more offers its most recent ones. */
const maxOffered = 50;

/**
 * An active workflow of the workspace a generated step may run as a
 * `call_workflow` node: what it is for, what it reads (its input variables)
 * and what it returns (its results). No graph: only what the agents need.
 */
export interface WorkflowTool {
  workflow_id: string;
  name: string;
  description: string;
  inputs: Array<{ name: string; type: PlanVariableType; optional: boolean }>;
  outputs: Array<{ name: string; type: PlanVariableType }>;
}

function planType(type: string | undefined): PlanVariableType {
  return (planVariableTypes as readonly string[]).includes(type ?? '') ? (type as PlanVariableType) : 'object';
}

function variablesOf(node: WorkflowNode | undefined, schema: 'output_schema' | 'input_schema') {
  return Object.values(node?.[schema]?.schema ?? {}).map((v) => ({
    name: v.variable_name,
    type: planType(v.allowed_types[0]?.type),
    optional: v.is_optional === true || v.is_nullable === true || v.default !== undefined,
  }));
}

const nodeOf = (graph: WorkflowGraph, handler: string) =>
  Object.values(graph.nodes).find((n) => handlerClassName(n) === handler);

/**
 * The workflows generation may call: the workspace's active ones, at their
 * active version, except the workflow being built and any that calls
 * another workflow itself, so a generated call can neither recurse nor nest
 * (the save-time call check is not on the generation path).
 */
export class WorkspaceWorkflows {
  constructor(private readonly workflows: Pick<WorkflowRepo, 'list' | 'latestActiveVersion'>) {}

  async list(organizationId: string, workspaceId: string, exceptWorkflowId: string): Promise<WorkflowTool[]> {
    const page = await this.workflows.list({
      organizationId,
      workspaceIds: [workspaceId],
      status: 'active',
      limit: maxOffered,
    });
    const offered: WorkflowTool[] = [];
    for (const workflow of page.items.filter((w) => w.id !== exceptWorkflowId)) {
      const version = await this.workflows.latestActiveVersion(workflow.id);
      if (!version) continue;
      const { graph } = version;
      if (nodeOf(graph, callWorkflowKind.handlerClass)) continue;
      offered.push({
        workflow_id: workflow.id,
        name: workflow.name,
        description: (version.description ?? workflow.description ?? '').slice(0, 500),
        inputs: variablesOf(nodeOf(graph, 'input'), 'output_schema'),
        outputs: variablesOf(nodeOf(graph, 'output'), 'input_schema').map(({ name, type }) => ({ name, type })),
      });
    }
    return offered;
  }
}
