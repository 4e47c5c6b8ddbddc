import type { NodeRecord, ReusedNode } from '../domain/cases.js';
import type { WorkflowGraph } from '../domain/graph.js';
import { isEntryNode } from '../domain/node-kinds/registry.js';
import { valueFits } from '../domain/variables.js';

/** A node of the original case a rerun from the failed node cannot reuse, and why. */
export interface UnreusableNode {
  nodeId: string;
  name: string;
  problem: string;
}

export interface ReusePlan {
  /** Nodes the rerun takes as completed, by node id. */
  reused: Record<string, ReusedNode>;
  /** Completed nodes the rerun's graph lacks, or whose recorded outputs do not fit its node's output schema. */
  unreusable: UnreusableNode[];
}

/** What a recorded output set lacks or holds wrongly for the node's output schema; empty when it fits. */
function outputProblems(graph: WorkflowGraph, nodeId: string, outputs: Record<string, unknown>): string[] {
  const problems: string[] = [];
  for (const entry of Object.values(graph.nodes[nodeId]?.output_schema?.schema ?? {})) {
    const name = entry.variable_name;
    if (!Object.hasOwn(outputs, name)) {
      if (!entry.is_optional) problems.push(`output ${name} was not recorded`);
    } else if (!valueFits(entry, outputs[name]))
      problems.push(`recorded output ${name} is not ${entry.allowed_types.map((t) => t.type).join(' or ')}`);
  }
  return problems;
}

/**
 * Which nodes of a failed case a rerun from the failed node reuses on
 * `graph` (the original version's or the latest one's): every node that
 * completed, except the entry node, which evaluates the rerun's own inputs.
 * Each must still be in the graph, with recorded outputs that fit its output
 * schema; the others are listed so the refusal names them.
 */
export function planReuse(originalCaseId: string, nodes: NodeRecord[], graph: WorkflowGraph): ReusePlan {
  const plan: ReusePlan = { reused: {}, unreusable: [] };
  for (const node of nodes) {
    if (node.status !== 'completed' || isEntryNode({ type: '', handler_class: node.handlerClass })) continue;
    const outputs = node.outputs ?? {};
    if (!graph.nodes[node.nodeId]) {
      plan.unreusable.push({ nodeId: node.nodeId, name: node.name, problem: 'not in the graph of this version' });
      continue;
    }
    const problems = outputProblems(graph, node.nodeId, outputs);
    if (problems.length > 0)
      plan.unreusable.push({ nodeId: node.nodeId, name: node.name, problem: problems.join('; ') });
    // A node the original reused itself points at where its outputs were produced.
    else plan.reused[node.nodeId] = { from: node.reused ?? { caseId: originalCaseId, nodeId: node.nodeId }, outputs };
  }
  return plan;
}
