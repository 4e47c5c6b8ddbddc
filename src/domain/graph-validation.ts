import type { WorkflowEdge, WorkflowGraph, WorkflowNode } from './graph.js';
import { inputKind } from './node-kinds/input.js';
import { outputKind } from './node-kinds/output.js';
import { processSchemaOf } from './node-kinds/process-schema.js';
import { nodeKinds } from './node-kinds/registry.js';
import { optionsProblem, type VariableSchema } from './variables.js';
import { handlerClassName } from './vocabulary.js';

/** One reason a graph cannot be saved; `path` is dotted from the graph root (`nodes.<id>.routes.<routeId>`). */
export interface GraphProblem {
  path: string;
  message: string;
}

/** The largest graph a save accepts: every check below is linear in it, but each is a cost a tenant chooses. */
export const graphLimits = { maxNodes: 500, maxEdges: 2000, maxBytes: 2 * 1024 * 1024 } as const;

/** The property a node lists when it declares routes. */
export const routeProperty = 'route';

/** Each node's outgoing edges (key and edge), for edges whose both ends exist. */
type OutEdges = Map<string, Array<[string, WorkflowEdge]>>;

function edgesFrom(graph: WorkflowGraph): OutEdges {
  const out: OutEdges = new Map();
  for (const [key, edge] of Object.entries(graph.edges)) {
    if (!Object.hasOwn(graph.nodes, edge.from_node_id) || !Object.hasOwn(graph.nodes, edge.to_node_id)) continue;
    const list = out.get(edge.from_node_id) ?? [];
    list.push([key, edge]);
    out.set(edge.from_node_id, list);
  }
  return out;
}

/** Node ids on a cycle, in order, or undefined when the graph is acyclic (iterative DFS: graphs may be deep). */
function findCycle(graph: WorkflowGraph, out: OutEdges): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  for (const start of Object.keys(graph.nodes)) {
    if (state.has(start)) continue;
    const stack: Array<{ id: string; next: number }> = [{ id: start, next: 0 }];
    state.set(start, 'open');
    while (stack.length > 0) {
      const top = stack[stack.length - 1];
      if (!top) break;
      const children = out.get(top.id) ?? [];
      const child = children[top.next];
      if (!child) {
        state.set(top.id, 'done');
        stack.pop();
        continue;
      }
      top.next += 1;
      const to = child[1].to_node_id;
      const seen = state.get(to);
      if (seen === 'open') {
        const path = stack.map((frame) => frame.id);
        return [...path.slice(path.indexOf(to)), to];
      }
      if (seen === undefined) {
        state.set(to, 'open');
        stack.push({ id: to, next: 0 });
      }
    }
  }
  return undefined;
}

function reachableFrom(start: string, out: OutEdges): Set<string> {
  const seen = new Set<string>([start]);
  const queue = [start];
  // An index, not shift(): shift() moves the whole array each time, which makes the walk quadratic.
  for (let i = 0; i < queue.length; i++) {
    const id = queue[i] ?? '';
    for (const [, edge] of out.get(id) ?? []) {
      if (!seen.has(edge.to_node_id)) {
        seen.add(edge.to_node_id);
        queue.push(edge.to_node_id);
      }
    }
  }
  return seen;
}

/**
 * Which nodes are upstream of which, for the mapping check: one pass in topological order (Kahn's),
 * each node's ancestors a bitset (a bigint, one bit per node) joined from its parents', so the check
 * costs edges × nodes/64 word operations rather than a walk back per mapped node. Nodes on or behind
 * a cycle are never reached; validation reports the cycle instead.
 */
function upstreamRelation(graph: WorkflowGraph, out: OutEdges): (nodeId: string, candidateId: string) => boolean {
  const ids = Object.keys(graph.nodes);
  const bit = new Map(ids.map((id, i) => [id, 1n << BigInt(i)]));
  const parentsLeft = new Map<string, number>();
  for (const list of out.values()) {
    for (const [, edge] of list) parentsLeft.set(edge.to_node_id, (parentsLeft.get(edge.to_node_id) ?? 0) + 1);
  }
  const ancestors = new Map<string, bigint>();
  const ready = ids.filter((id) => !parentsLeft.has(id));
  // for…of visits the ids pushed during the loop: the queue of Kahn's algorithm.
  for (const id of ready) {
    const passedOn = (ancestors.get(id) ?? 0n) | (bit.get(id) ?? 0n);
    for (const [, edge] of out.get(id) ?? []) {
      const child = edge.to_node_id;
      ancestors.set(child, (ancestors.get(child) ?? 0n) | passedOn);
      const left = (parentsLeft.get(child) ?? 0) - 1;
      parentsLeft.set(child, left);
      if (left === 0) ready.push(child);
    }
  }
  return (nodeId, candidateId) => ((ancestors.get(nodeId) ?? 0n) & (bit.get(candidateId) ?? 0n)) !== 0n;
}

function checkVariableSchema(schema: VariableSchema | undefined, path: string, problems: GraphProblem[]): void {
  for (const [key, entry] of Object.entries(schema?.schema ?? {})) {
    if (entry.id !== key)
      problems.push({
        path: `${path}.schema.${key}.id`,
        message: `Variable key ${key} differs from its id ${entry.id}`,
      });
    const options = optionsProblem(entry);
    if (options) problems.push({ path: `${path}.schema.${key}.tags`, message: options });
  }
}

/** Variable names must be unique where they become map keys (jobPayloadSchema, results). */
function checkUniqueNames(schema: VariableSchema | undefined, path: string, problems: GraphProblem[]): void {
  const seen = new Map<string, string>();
  for (const [key, entry] of Object.entries(schema?.schema ?? {})) {
    const first = seen.get(entry.variable_name);
    if (first !== undefined) {
      problems.push({
        path: `${path}.schema.${key}.variable_name`,
        message: `variable_name ${entry.variable_name} is also used by ${first}`,
      });
    } else seen.set(entry.variable_name, key);
  }
}

function checkProcess(key: string, node: WorkflowNode, problems: GraphProblem[]): void {
  const name = handlerClassName(node);
  const kind = nodeKinds.of(node);
  if (!kind) {
    problems.push({
      path: `nodes.${key}.handler_class`,
      message: node.handler_class ? `Unknown handler_class ${name}` : `Node type ${node.type} needs a handler_class`,
    });
    return;
  }
  if (kind.nodeType !== node.type) {
    problems.push({
      path: `nodes.${key}.handler_class`,
      message: `handler_class ${name} belongs to node type ${kind.nodeType}, not ${node.type}`,
    });
  }
  const parsed = processSchemaOf(kind).safeParse(node.process ?? {});
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      problems.push({ path: ['nodes', key, 'process', ...issue.path.map(String)].join('.'), message: issue.message });
    }
    return;
  }
  for (const problem of kind.check?.(node, parsed.data) ?? [])
    problems.push({ path: `nodes.${key}.${problem.path}`, message: problem.message });
}

/** The four parts of routing must agree: routes entry, bool output variable, `route` property, edges. */
function checkRoutes(
  key: string,
  node: WorkflowNode,
  outgoing: Array<[string, WorkflowEdge]>,
  problems: GraphProblem[],
): void {
  const routes = Object.entries(node.routes ?? {});
  const declaresRouting = (node.properties ?? []).includes(routeProperty);
  if (routes.length > 0 && !declaresRouting) {
    problems.push({
      path: `nodes.${key}.properties`,
      message: `A node with routes must list "${routeProperty}" in properties`,
    });
  }
  if (routes.length === 0 && declaresRouting) {
    problems.push({
      path: `nodes.${key}.routes`,
      message: `properties lists "${routeProperty}" but the node declares no routes`,
    });
  }
  for (const [routeKey, route] of routes) {
    const path = `nodes.${key}.routes.${routeKey}`;
    if (route.id !== routeKey)
      problems.push({ path: `${path}.id`, message: `Route key ${routeKey} differs from its id ${route.id}` });
    const variable = node.output_schema?.schema[routeKey];
    if (!variable) {
      problems.push({
        path: `nodes.${key}.output_schema.schema.${routeKey}`,
        message: `Route ${routeKey} needs a bool output variable keyed by the route id`,
      });
    } else if (variable.allowed_types.length !== 1 || variable.allowed_types[0]?.type !== 'bool') {
      problems.push({
        path: `nodes.${key}.output_schema.schema.${routeKey}.allowed_types`,
        message: `The output variable of route ${routeKey} must be of type bool only`,
      });
    }
    if (!outgoing.some(([, edge]) => edge.route_id === routeKey)) {
      problems.push({ path, message: `No edge out of the node carries route_id ${routeKey}` });
    }
  }
  for (const [edgeKey, edge] of outgoing) {
    if (edge.route_id !== undefined && !Object.hasOwn(node.routes ?? {}, edge.route_id)) {
      problems.push({
        path: `edges.${edgeKey}.route_id`,
        message: `Route ${edge.route_id} is not declared in the routes of node ${key}`,
      });
    }
  }
}

function checkData(
  key: string,
  node: WorkflowNode,
  graph: WorkflowGraph,
  isUpstream: (nodeId: string, candidateId: string) => boolean,
  problems: GraphProblem[],
): void {
  const inputs = node.input_schema?.schema ?? {};
  for (const [variableId, mapping] of Object.entries(node.variable_mappings ?? {})) {
    const path = `nodes.${key}.variable_mappings.${variableId}`;
    if (!Object.hasOwn(inputs, variableId))
      problems.push({ path, message: `Node has no input variable ${variableId}` });
    const from = Object.hasOwn(graph.nodes, mapping.from_node_id) ? graph.nodes[mapping.from_node_id] : undefined;
    if (!from || !isUpstream(key, mapping.from_node_id)) {
      problems.push({
        path: `${path}.from_node_id`,
        message: `Node ${mapping.from_node_id} is not upstream of node ${key}`,
      });
    } else if (!Object.hasOwn(from.output_schema?.schema ?? {}, mapping.from_variable_id)) {
      problems.push({
        path: `${path}.from_variable_id`,
        message: `Node ${mapping.from_node_id} has no output variable ${mapping.from_variable_id}`,
      });
    }
  }
  for (const variableId of Object.keys(node.fixed_values ?? {})) {
    if (!Object.hasOwn(inputs, variableId))
      problems.push({
        path: `nodes.${key}.fixed_values.${variableId}`,
        message: `Node has no input variable ${variableId}`,
      });
  }
}

/**
 * Everything that makes a graph unrunnable, checked when a workflow is saved
 * (structure, routing, handler configuration, data flow). Empty when valid.
 */
export function validateGraph(graph: WorkflowGraph): GraphProblem[] {
  const problems: GraphProblem[] = [];
  const nodes = Object.entries(graph.nodes);
  // Size first: every later check then runs on a bounded graph.
  const edgeCount = Object.keys(graph.edges).length;
  if (nodes.length > graphLimits.maxNodes)
    problems.push({ path: 'nodes', message: `At most ${graphLimits.maxNodes} nodes, found ${nodes.length}` });
  if (edgeCount > graphLimits.maxEdges)
    problems.push({ path: 'edges', message: `At most ${graphLimits.maxEdges} edges, found ${edgeCount}` });
  const bytes = Buffer.byteLength(JSON.stringify(graph));
  if (bytes > graphLimits.maxBytes)
    problems.push({
      path: 'nodes',
      message: `The graph may be at most ${graphLimits.maxBytes} bytes as JSON, found ${bytes}`,
    });
  if (problems.length > 0) return problems;
  for (const [key, node] of nodes) {
    if (node.id !== key)
      problems.push({ path: `nodes.${key}.id`, message: `Node key ${key} differs from its id ${node.id}` });
  }
  for (const [key, edge] of Object.entries(graph.edges)) {
    if (edge.id !== key)
      problems.push({ path: `edges.${key}.id`, message: `Edge key ${key} differs from its id ${edge.id}` });
    for (const end of ['from_node_id', 'to_node_id'] as const) {
      if (!Object.hasOwn(graph.nodes, edge[end]))
        problems.push({ path: `edges.${key}.${end}`, message: `Node ${edge[end]} is not in nodes` });
    }
    if (edge.route_complement === true && edge.route_id === undefined) {
      problems.push({ path: `edges.${key}.route_complement`, message: 'route_complement needs a route_id' });
    }
  }

  const inputNodes = nodes.filter(([, node]) => node.type === inputKind.nodeType);
  const outputNodes = nodes.filter(([, node]) => node.type === outputKind.nodeType);
  if (inputNodes.length !== 1)
    problems.push({ path: 'nodes', message: `Exactly one input node is required, found ${inputNodes.length}` });
  if (outputNodes.length !== 1)
    problems.push({ path: 'nodes', message: `Exactly one output node is required, found ${outputNodes.length}` });

  const out = edgesFrom(graph);
  const cycle = findCycle(graph, out);
  if (cycle) problems.push({ path: 'edges', message: `The graph has a cycle: ${cycle.join(' -> ')}` });
  const [inputEntry] = inputNodes;
  if (inputEntry && inputNodes.length === 1) {
    const reachable = reachableFrom(inputEntry[0], out);
    for (const [key] of nodes) {
      if (!reachable.has(key))
        problems.push({ path: `nodes.${key}`, message: `Node ${key} is not reachable from the input node` });
    }
    checkUniqueNames(inputEntry[1].output_schema, `nodes.${inputEntry[0]}.output_schema`, problems);
  }
  const [outputEntry] = outputNodes;
  if (outputEntry && outputNodes.length === 1)
    checkUniqueNames(outputEntry[1].input_schema, `nodes.${outputEntry[0]}.input_schema`, problems);

  const isUpstream = upstreamRelation(graph, out);
  for (const [key, node] of nodes) {
    checkVariableSchema(node.input_schema, `nodes.${key}.input_schema`, problems);
    checkVariableSchema(node.output_schema, `nodes.${key}.output_schema`, problems);
    checkProcess(key, node, problems);
    checkRoutes(key, node, out.get(key) ?? [], problems);
    // Ancestors are meaningless on a cyclic graph; the cycle is reported already.
    if (!cycle) checkData(key, node, graph, isUpstream, problems);
  }
  return problems;
}
