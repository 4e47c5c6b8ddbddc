import type { WorkflowGraph, WorkflowNode } from '../domain/graph.js';
import type { VariableSchemaEntry } from '../domain/variables.js';
import { handlerClassName } from '../domain/vocabulary.js';
import type { CatalogNames } from './catalog-names.js';
import { nodeId } from './compile.js';
import {
  inputNodeName,
  outputNodeName,
  type AfterEntry,
  type NodeSpec,
  type VariableObject,
  type VariableSpec,
  type WorkflowFile,
} from './format.js';
import { formatRouteRules } from './rules.js';
import { afterTarget } from './shared.js';

export interface WorkflowToWrite {
  name: string;
  description?: string | null;
  active: boolean;
  graph: WorkflowGraph;
}

type Names = Map<string, string>;

/** The file of a graph: names instead of ids, the short forms wherever they say the same. */
export async function decompileWorkflow(workflow: WorkflowToWrite, catalog: CatalogNames): Promise<WorkflowFile> {
  const { graph } = workflow;
  const ordered = topological(graph);
  const names = nodeNames(ordered);
  const file: WorkflowFile = { name: workflow.name };
  if (workflow.description) file.description = workflow.description;
  if (!workflow.active) file.active = false;
  const nodes: Record<string, NodeSpec> = {};
  for (const node of ordered) {
    const name = names.get(node.id) ?? node.id;
    const keepId = node.id !== nodeId(name) ? node.id : undefined;
    if (node.type === 'input') {
      if (keepId) file.input_id = keepId;
      const inputs = variables(node.output_schema?.schema);
      if (Object.keys(inputs).length > 0) file.inputs = inputs;
    } else if (node.type === 'output') {
      if (keepId) file.output_id = keepId;
      const spec = nodeInputs(node, graph, names);
      if (spec.inputs) file.results = spec.inputs;
      if (spec.after) file.results_after = spec.after;
    } else {
      nodes[name] = {
        ...(keepId ? { id: keepId } : {}),
        ...(node.description !== undefined ? { description: node.description } : {}),
        ...(await runs(node, catalog)),
        ...nodeInputs(node, graph, names),
        ...nodeOutputs(node),
        ...(node.execution ? { execution: node.execution } : {}),
      };
    }
  }
  if (Object.keys(nodes).length > 0) file.nodes = nodes;
  return file;
}

/** Input first, then each node after the nodes it follows, output last. */
function topological(graph: WorkflowGraph): WorkflowNode[] {
  const all = Object.values(graph.nodes);
  const incoming = new Map(all.map((n) => [n.id, 0]));
  for (const e of Object.values(graph.edges)) incoming.set(e.to_node_id, (incoming.get(e.to_node_id) ?? 0) + 1);
  const ready = all.filter((n) => incoming.get(n.id) === 0);
  const ordered: WorkflowNode[] = [];
  while (ready.length > 0) {
    const node = ready.shift();
    if (!node) break;
    ordered.push(node);
    for (const e of Object.values(graph.edges)) {
      if (e.from_node_id !== node.id) continue;
      const left = (incoming.get(e.to_node_id) ?? 0) - 1;
      incoming.set(e.to_node_id, left);
      const next = graph.nodes[e.to_node_id];
      if (left === 0 && next) ready.push(next);
    }
  }
  // A graph with a cycle (refused by every save) still writes out every node.
  const rest = all.filter((n) => !ordered.includes(n));
  return [...ordered, ...rest].sort((a, b) => rank(a) - rank(b));
}

const rank = (node: WorkflowNode) => (node.type === 'input' ? -1 : node.type === 'output' ? 1 : 0);

/** Unique file names from the nodes' names (no dots: a dot separates node from variable in a reference). */
function nodeNames(nodes: WorkflowNode[]): Names {
  const names: Names = new Map();
  const taken = new Set<string>();
  for (const node of nodes) {
    if (node.type === 'input' || node.type === 'output') {
      names.set(node.id, node.type === 'input' ? inputNodeName : outputNodeName);
      continue;
    }
    const base = node.name.replaceAll('.', ' ').trim() || 'node';
    let name = base;
    for (let i = 2; taken.has(name) || name === inputNodeName || name === outputNodeName; i++) name = `${base} ${i}`;
    taken.add(name);
    names.set(node.id, name);
  }
  return names;
}

function typeSpec(entry: VariableSchemaEntry): VariableObject['type'] {
  const types = entry.allowed_types.map((t) => t.type);
  return types.length === 1 ? types[0] : types;
}

function extras(entry: VariableSchemaEntry): VariableObject {
  const result: VariableObject = {};
  if (entry.is_optional !== undefined) result.optional = entry.is_optional;
  if (entry.is_nullable !== undefined) result.nullable = entry.is_nullable;
  if (entry.default !== undefined) result.default = entry.default;
  if (entry.description !== undefined) result.description = entry.description;
  if (entry.display_name !== undefined) result.display_name = entry.display_name;
  return result;
}

/** A declared variable: its type alone when nothing else is said. */
function variable(entry: VariableSchemaEntry): VariableSpec {
  const more = extras(entry);
  const type = typeSpec(entry) ?? [];
  return Object.keys(more).length === 0 ? type : { type, ...more };
}

function variables(schema: Record<string, VariableSchemaEntry> | undefined, skip: ReadonlySet<string> = new Set()) {
  const result: Record<string, VariableSpec> = {};
  for (const entry of Object.values(schema ?? {}))
    if (!skip.has(entry.id)) result[entry.variable_name] = variable(entry);
  return result;
}

const sameTypes = (a: VariableSchemaEntry, b: VariableSchemaEntry) =>
  JSON.stringify(a.allowed_types) === JSON.stringify(b.allowed_types);

function nodeInputs(node: WorkflowNode, graph: WorkflowGraph, names: Names): Pick<NodeSpec, 'inputs' | 'after'> {
  const inputs: Record<string, VariableSpec> = {};
  const sources: string[] = [];
  for (const entry of Object.values(node.input_schema?.schema ?? {})) {
    const mapping = node.variable_mappings?.[entry.id];
    const source = mapping && graph.nodes[mapping.from_node_id];
    const sourceVariable = mapping && source?.output_schema?.schema[mapping.from_variable_id];
    const more = extras(entry);
    if (source && sourceVariable) {
      const sourceName = names.get(source.id) ?? source.id;
      if (!sources.includes(sourceName)) sources.push(sourceName);
      const from = `${sourceName}.${sourceVariable.variable_name}`;
      inputs[entry.variable_name] =
        Object.keys(more).length === 0 && sameTypes(entry, sourceVariable)
          ? from
          : { from, type: typeSpec(entry), ...more };
    } else if (node.fixed_values && Object.hasOwn(node.fixed_values, entry.id)) {
      inputs[entry.variable_name] = { value: node.fixed_values[entry.id], type: typeSpec(entry), ...more };
    } else inputs[entry.variable_name] = variable(entry);
  }
  const after = incoming(node, graph, names);
  const implied = sources.length > 0 ? sources : [inputNodeName];
  const same = after.length === implied.length && after.every((a) => typeof a === 'string' && implied.includes(a));
  return {
    ...(Object.keys(inputs).length > 0 ? { inputs } : {}),
    ...(same ? {} : { after }),
  };
}

function incoming(node: WorkflowNode, graph: WorkflowGraph, names: Names): AfterEntry[] {
  const after: AfterEntry[] = [];
  for (const edge of Object.values(graph.edges)) {
    if (edge.to_node_id !== node.id) continue;
    const from = names.get(edge.from_node_id) ?? edge.from_node_id;
    if (edge.route_id === undefined) {
      after.push(from);
      continue;
    }
    const route = graph.nodes[edge.from_node_id]?.output_schema?.schema[edge.route_id]?.variable_name ?? edge.route_id;
    after.push({ [from]: edge.route_complement ? `not ${route}` : route });
  }
  // Written in a stable order so the same graph always gives the same file.
  return after.sort((a, b) => JSON.stringify(afterTarget(a)).localeCompare(JSON.stringify(afterTarget(b))));
}

function nodeOutputs(node: WorkflowNode): Pick<NodeSpec, 'outputs' | 'routes'> {
  const routeIds = new Set(Object.keys(node.routes ?? {}));
  const isCondition = handlerClassName(node) === 'condition';
  const outputs = variables(node.output_schema?.schema, isCondition ? routeIds : new Set());
  const routes = [...routeIds].map((id) => node.output_schema?.schema[id]?.variable_name ?? id);
  return {
    ...(Object.keys(outputs).length > 0 ? { outputs } : {}),
    ...(!isCondition && routes.length > 0 ? { routes } : {}),
  };
}

async function runs(node: WorkflowNode, catalog: CatalogNames): Promise<NodeSpec> {
  const process = node.process ?? {};
  const handler = handlerClassName(node);
  const raw: NodeSpec = { kind: handler, type: node.type, process };
  if (handler === 'python_code') {
    if (typeof process.source === 'string') return { python: process.source };
    // No GET of a code node: its source cannot be read back, so the file keeps the version by its ids.
    if (typeof process.code_id === 'string' && typeof process.code_version_id === 'string')
      return {
        code: {
          id: process.code_id,
          version_id: process.code_version_id,
          ...(typeof process.source_sha256 === 'string' ? { source_sha256: process.source_sha256 } : {}),
        },
      };
  }
  if (handler === 'integration_action' && typeof process.connection_id === 'string') {
    const action =
      typeof process.action_version_id === 'string'
        ? await catalog.action({ connectionId: process.connection_id, actionVersionId: process.action_version_id })
        : undefined;
    if (action) return { action };
  }
  if (handler === 'llm_agent') return { agent: process };
  if (handler === 'call_workflow' && typeof process.workflow_id === 'string') {
    const workflow = await catalog.workflow(process.workflow_id);
    const version = process.version_number;
    if (workflow && version === undefined) return { call: workflow };
    if (workflow && typeof version === 'number') return { call: { workflow, version } };
  }
  if (handler === 'condition' && isRoutes(process.routes)) {
    const condition: NonNullable<NodeSpec['condition']> = {};
    for (const [id, rules] of Object.entries(process.routes))
      condition[node.output_schema?.schema[id]?.variable_name ?? id] = formatRouteRules(rules);
    return { condition };
  }
  return raw;
}

function isRoutes(value: unknown): value is Record<string, Parameters<typeof formatRouteRules>[0]> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
