import type { WorkflowGraph, WorkflowNode } from '../domain/graph.js';
import type { GraphProblem } from '../domain/graph-validation.js';
import { callWorkflowKind, type CallWorkflowProcess } from '../domain/node-kinds/call-workflow.js';
import { outputKind } from '../domain/node-kinds/output.js';
import { handlerClassName } from '../domain/vocabulary.js';

/** A workflow version a call_workflow node would run. */
export interface Callee {
  workflowId: string;
  versionId: string;
  name: string;
  graph: WorkflowGraph;
}

/** The version a node's `process` names, or why it names none (unknown, no active version…). */
export type CalleeLookup = (process: CallWorkflowProcess) => Promise<Callee | string>;

/** The workflow being saved: its graph stands for its own unpinned calls (it may become the active version). */
export interface SavedWorkflow {
  /** Absent while it is being created (nothing can call it yet). */
  workflowId?: string;
  name: string;
  graph: WorkflowGraph;
}

interface Link {
  key: string;
  name: string;
  graph: WorkflowGraph;
}

/** Calls that come back to a workflow already on the path: the path, by workflow name. */
class CallCycle extends Error {
  constructor(readonly names: string[]) {
    super(`calls recurse: ${names.join(' -> ')}`);
  }
}

const SELF = 'self';

function callNodes(graph: WorkflowGraph): Array<[string, WorkflowNode]> {
  return Object.entries(graph.nodes).filter(([, node]) => handlerClassName(node) === callWorkflowKind.handlerClass);
}

/** The node's outputs are the callee's results: each output variable must be one of them (by variable_name). */
function outputProblems(key: string, node: WorkflowNode, callee: Link): GraphProblem[] {
  const exit = Object.values(callee.graph.nodes).find((n) => n.type === outputKind.nodeType);
  const results = new Set(Object.values(exit?.input_schema?.schema ?? {}).map((v) => v.variable_name));
  return Object.entries(node.output_schema?.schema ?? {})
    .filter(([, variable]) => !results.has(variable.variable_name))
    .map(([id, variable]) => ({
      path: `nodes.${key}.output_schema.schema.${id}`,
      message: `workflow ${callee.name} has no result ${variable.variable_name}`,
    }));
}

/**
 * Save-time checks of a graph's call_workflow nodes: each callee resolves in the workflow's
 * workspace, the node's outputs are among its results, and following the calls down (each version as it would run) neither comes back to a
 * workflow on the path nor nests deeper than `maxDepth` cases. Each workflow version is walked once
 * (depth-first, the longest path below it remembered), so a wide call graph costs its size, not its paths.
 */
export async function callProblems(
  saved: SavedWorkflow,
  lookup: CalleeLookup,
  maxDepth: number,
): Promise<GraphProblem[]> {
  const resolved = new Map<string, Promise<Callee | string>>();
  const open = new Set<string>();
  const below = new Map<string, string[]>();

  const resolve = (process: CallWorkflowProcess): Promise<Callee | string> => {
    const ref = `${process.workflow_id}|${process.version_number ?? ''}`;
    let found = resolved.get(ref);
    if (!found) {
      found = lookup(process);
      resolved.set(ref, found);
    }
    return found;
  };

  /** The node's callee as a link of the path: an unpinned call of the saved workflow is the saved graph. */
  const linkOf = async (node: WorkflowNode): Promise<Link | string> => {
    const process = node.process as CallWorkflowProcess;
    const callee = await resolve(process);
    if (typeof callee === 'string') return callee;
    if (callee.workflowId === saved.workflowId && process.version_number === undefined)
      return { key: SELF, name: saved.name, graph: saved.graph };
    return { key: `${callee.workflowId}@${callee.versionId}`, name: callee.name, graph: callee.graph };
  };

  /** The longest call path (names) starting with this link below `chain`; throws CallCycle. */
  const through = async (chain: Link[], link: Link): Promise<string[]> => {
    if (open.has(link.key)) {
      const from = chain.findIndex((c) => c.key === link.key);
      throw new CallCycle([...chain.slice(from).map((c) => c.name), link.name]);
    }
    return [link.name, ...(below.get(link.key) ?? (await visit([...chain, link])))];
  };

  const visit = async (chain: Link[]): Promise<string[]> => {
    const here = chain[chain.length - 1] as Link;
    // Deeper than the limit already: the save is refused, no need to walk further.
    if (chain.length > maxDepth + 1) return [];
    open.add(here.key);
    try {
      let longest: string[] = [];
      for (const [, node] of callNodes(here.graph)) {
        const link = await linkOf(node);
        if (typeof link === 'string') continue; // refused at that workflow's own save, and at run time
        const path = await through(chain, link);
        if (path.length > longest.length) longest = path;
      }
      below.set(here.key, longest);
      return longest;
    } finally {
      // A cycle found below leaves the path: the next call node of the saved graph walks afresh.
      open.delete(here.key);
    }
  };

  const root: Link = { key: SELF, name: saved.name, graph: saved.graph };
  open.add(SELF);
  const problems: GraphProblem[] = [];
  for (const [key, node] of callNodes(saved.graph)) {
    const path = `nodes.${key}.process.workflow_id`;
    const link = await linkOf(node);
    if (typeof link === 'string') {
      problems.push({ path, message: link });
      continue;
    }
    problems.push(...outputProblems(key, node, link));
    try {
      const calls = await through([root], link);
      if (calls.length > maxDepth)
        problems.push({
          path,
          message: `Calls nest ${calls.length} cases deep, over the limit of ${maxDepth} (cases.maxCallDepth): ${[saved.name, ...calls].join(' -> ')}`,
        });
    } catch (err) {
      if (!(err instanceof CallCycle)) throw err;
      problems.push({ path, message: `Calls recurse: ${err.names.join(' -> ')}` });
    }
  }
  return problems;
}
