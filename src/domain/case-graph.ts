import type { WorkflowEdge, WorkflowGraph, WorkflowNode } from './graph.js';

/**
 * Pure graph reading for the case engine (the workflow bundle imports it:
 * no I/O, no clocks, deterministic iteration in the graph's key order).
 */
export interface GraphIndex {
  graph: WorkflowGraph;
  incoming: Map<string, WorkflowEdge[]>;
  outgoing: Map<string, WorkflowEdge[]>;
  /** Node ids in a topological order (graph key order among equals); nodes on a cycle are left out. */
  order: string[];
}

export function indexGraph(graph: WorkflowGraph): GraphIndex {
  const incoming = new Map<string, WorkflowEdge[]>();
  const outgoing = new Map<string, WorkflowEdge[]>();
  for (const id of Object.keys(graph.nodes)) {
    incoming.set(id, []);
    outgoing.set(id, []);
  }
  for (const edge of Object.values(graph.edges)) {
    if (!graph.nodes[edge.from_node_id] || !graph.nodes[edge.to_node_id]) continue;
    outgoing.get(edge.from_node_id)?.push(edge);
    incoming.get(edge.to_node_id)?.push(edge);
  }
  const indegree = new Map<string, number>();
  for (const [id, edges] of incoming) indegree.set(id, edges.length);
  const order: string[] = [];
  const queue = Object.keys(graph.nodes).filter((id) => indegree.get(id) === 0);
  while (queue.length > 0) {
    const id = queue.shift() as string;
    order.push(id);
    for (const edge of outgoing.get(id) ?? []) {
      const left = (indegree.get(edge.to_node_id) ?? 0) - 1;
      indegree.set(edge.to_node_id, left);
      if (left === 0) queue.push(edge.to_node_id);
    }
  }
  return { graph, incoming, outgoing, order };
}

/** The output variable a route reads: the output_schema entry keyed by the route id (its variable_name). */
export function routeVariableName(node: WorkflowNode, routeId: string): string {
  return node.output_schema?.schema[routeId]?.variable_name ?? routeId;
}

/**
 * Whether an edge out of a finished node is taken: plain edges always; a
 * route edge when the route's boolean is true, its complement when it is not.
 */
export function edgeTaken(edge: WorkflowEdge, from: WorkflowNode, fromOutputs: Record<string, unknown>): boolean {
  if (edge.route_id === undefined) return true;
  const value = fromOutputs[routeVariableName(from, edge.route_id)] === true;
  return edge.route_complement === true ? !value : value;
}

/**
 * A node's inputs keyed by variable_name. Each declared input variable takes,
 * in order: its variable mapping (an upstream node's output variable), its
 * fixed value, the same-named output of a parent, its default. A node that
 * declares no input schema receives its parents' outputs merged (later
 * parents win) plus its fixed values.
 */
export function resolveNodeInputs(
  index: GraphIndex,
  node: WorkflowNode,
  outputs: ReadonlyMap<string, Record<string, unknown>>,
): Record<string, unknown> {
  const parentOutputs = (index.incoming.get(node.id) ?? [])
    .map((edge) => outputs.get(edge.from_node_id))
    .filter((o): o is Record<string, unknown> => o !== undefined);
  const fixed = node.fixed_values ?? {};
  const declared = node.input_schema?.schema;
  if (!declared || Object.keys(declared).length === 0) {
    return Object.assign({}, ...parentOutputs, fixed) as Record<string, unknown>;
  }
  const inputs: Record<string, unknown> = {};
  for (const [variableId, entry] of Object.entries(declared)) {
    const name = entry.variable_name;
    const mapping = node.variable_mappings?.[variableId];
    if (mapping) {
      const source = index.graph.nodes[mapping.from_node_id];
      const sourceName =
        source?.output_schema?.schema[mapping.from_variable_id]?.variable_name ?? mapping.from_variable_id;
      const sourceOutputs = outputs.get(mapping.from_node_id);
      if (sourceOutputs && Object.hasOwn(sourceOutputs, sourceName)) inputs[name] = sourceOutputs[sourceName];
      continue;
    }
    if (Object.hasOwn(fixed, variableId)) {
      inputs[name] = fixed[variableId];
      continue;
    }
    const parent = parentOutputs.find((o) => Object.hasOwn(o, name));
    if (parent) inputs[name] = parent[name];
    else if (entry.default !== undefined) inputs[name] = entry.default;
  }
  return inputs;
}
