import type { WorkflowEdge, WorkflowGraph, WorkflowNode } from '../domain/graph.js';
import type { VariableSchema, VariableSchemaEntry } from '../domain/variables.js';
import type { VariableType } from '../domain/vocabulary.js';
import { createHash } from 'node:crypto';
import type { CatalogIds, CodeField } from './catalog-names.js';
import { WorkflowFileError } from './errors.js';
import {
  inputNodeName,
  outputNodeName,
  type AfterEntry,
  type NodeSpec,
  type VariableSpec,
  type WorkflowFile,
} from './format.js';
import { nameId } from './ids.js';
import { parseRouteRules, RuleSyntaxError } from './rules.js';
import { afterTarget, isTypeName, kindKeys, nodeTypes } from './shared.js';

export interface CompiledWorkflow {
  name: string;
  description: string | undefined;
  active: boolean;
  graph: WorkflowGraph;
}

export interface CompileOptions {
  catalog: CatalogIds;
  /** Reads a `python_file` (a path relative to the workflow file). */
  readFile(path: string): Promise<string>;
}

export const nodeId = (name: string) => nameId('node', name);
const variableId = (node: string, side: 'in' | 'out', variable: string) => nameId('variable', node, side, variable);

interface Draft {
  name: string;
  spec: NodeSpec;
  node: WorkflowNode;
  path: string;
}

function inferType(value: unknown): VariableType {
  if (typeof value === 'string') return 'str';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  if (Array.isArray(value)) return 'array';
  return 'object';
}

const typesOf = (t: VariableType | VariableType[]) => (Array.isArray(t) ? t : [t]).map((type) => ({ type }));

/** The graph a workflow file describes; references are checked against each other and resolved by `catalog`. */
export async function compileWorkflow(file: WorkflowFile, options: CompileOptions): Promise<CompiledWorkflow> {
  const problems: string[] = [];
  const drafts = new Map<string, Draft>();
  /** Sources of the code nodes the file declares, by node name: registered once everything else is right. */
  const declared = new Map<string, string>();
  const add = (name: string, spec: NodeSpec, node: Omit<WorkflowNode, 'id'>, path: string) =>
    drafts.set(name, { name, spec, node: { id: spec.id ?? nodeId(name), ...node }, path });

  add(
    inputNodeName,
    { outputs: file.inputs ?? {}, id: file.input_id },
    { name: 'Workflow Input', type: 'input' },
    'inputs',
  );
  for (const [name, spec] of Object.entries(file.nodes ?? {})) {
    const path = `nodes.${name}`;
    if (name === inputNodeName || name === outputNodeName) {
      problems.push(`${path}: "${name}" is the name of the workflow's own ${name} node`);
      continue;
    }
    add(name, spec, await runs(name, spec, path, options, problems, declared), path);
  }
  add(
    outputNodeName,
    { inputs: file.results ?? {}, id: file.output_id, ...(file.results_after ? { after: file.results_after } : {}) },
    { name: 'Workflow Output', type: 'output' },
    'results',
  );

  for (const draft of drafts.values()) declareOutputs(draft, problems);
  const edges: Record<string, WorkflowEdge> = {};
  for (const draft of drafts.values()) {
    if (draft.name === inputNodeName) continue;
    const sources = declareInputs(draft, drafts, problems);
    const after = draft.spec.after ?? (sources.length > 0 ? sources : [inputNodeName]);
    for (const entry of after) {
      const edge = toEdge(entry, draft, drafts, problems);
      if (edge) edges[edge.id] = edge;
    }
  }
  if (problems.length === 0) await registerCode(drafts, declared, options.catalog, problems);
  if (problems.length > 0) throw new WorkflowFileError(problems);
  const nodes: Record<string, WorkflowNode> = {};
  for (const { node } of drafts.values()) nodes[node.id] = node;
  return { name: file.name, description: file.description, active: file.active ?? true, graph: { nodes, edges } };
}

/** type, handler_class and process of a node from the one key saying what it runs. */
async function runs(
  name: string,
  spec: NodeSpec,
  path: string,
  options: CompileOptions,
  problems: string[],
  declared: Map<string, string>,
): Promise<Omit<WorkflowNode, 'id'>> {
  const base = {
    name,
    ...(spec.description !== undefined ? { description: spec.description } : {}),
    ...(spec.execution ? { execution: spec.execution } : {}),
  };
  const present = kindKeys.filter((k) => spec[k] !== undefined);
  if (present.length !== 1) {
    problems.push(`${path}: say what the node runs with exactly one of ${kindKeys.join(', ')}`);
    return { ...base, type: 'code' };
  }
  if (spec.type !== undefined && spec.kind === undefined) problems.push(`${path}.type: only with kind`);
  if (spec.process !== undefined && spec.kind === undefined) problems.push(`${path}.process: only with kind`);
  const typed = (handler: keyof typeof nodeTypes, process: Record<string, unknown>) => ({
    ...base,
    type: nodeTypes[handler],
    handler_class: handler,
    process,
  });
  if (spec.python !== undefined) return typed('python_code', { source: spec.python });
  const read = async (file: string, at: string) => {
    try {
      return await options.readFile(file);
    } catch (err) {
      problems.push(`${at}: cannot read ${file}: ${err instanceof Error ? err.message : ''}`);
      return undefined;
    }
  };
  if (spec.python_file !== undefined) {
    const source = await read(spec.python_file, `${path}.python_file`);
    return typed('python_code', source === undefined ? {} : { source });
  }
  if (spec.code !== undefined) {
    const code = spec.code;
    if ('id' in code)
      return typed('python_code', {
        code_id: code.id,
        code_version_id: code.version_id,
        ...(code.source_sha256 !== undefined ? { source_sha256: code.source_sha256 } : {}),
      });
    if ((code.source === undefined) === (code.source_file === undefined))
      problems.push(`${path}.code: give its source or its source_file`);
    const source =
      code.source_file !== undefined ? await read(code.source_file, `${path}.code.source_file`) : code.source;
    if (source !== undefined) declared.set(name, source);
    return typed('python_code', {});
  }
  if (spec.action !== undefined) {
    const found = await options.catalog.action(spec.action.connection, spec.action.action);
    if ('missing' in found) problems.push(`${path}.action: ${found.missing}`);
    return typed(
      'integration_action',
      'found' in found
        ? { connection_id: found.found.connectionId, action_version_id: found.found.actionVersionId }
        : {},
    );
  }
  if (spec.agent !== undefined) return typed('llm_agent', spec.agent);
  if (spec.call !== undefined) {
    const ref = typeof spec.call === 'string' ? { workflow: spec.call, version: undefined } : spec.call;
    const found = await options.catalog.workflow(ref.workflow);
    if ('missing' in found) problems.push(`${path}.call: ${found.missing}`);
    return typed('call_workflow', {
      ...('found' in found ? { workflow_id: found.found } : {}),
      ...(ref.version !== undefined ? { version_number: ref.version } : {}),
    });
  }
  if (spec.condition !== undefined) {
    const routes: Record<string, unknown> = {};
    for (const [route, rules] of Object.entries(spec.condition)) {
      try {
        routes[variableId(name, 'out', route)] = parseRouteRules(rules);
      } catch (err) {
        if (!(err instanceof RuleSyntaxError)) throw err;
        problems.push(`${path}.condition.${route}: ${err.message}`);
      }
    }
    return typed('condition', { routes });
  }
  const kind = spec.kind ?? '';
  return { ...base, type: spec.type ?? kind, handler_class: kind, process: spec.process ?? {} };
}

function entry(
  node: string,
  side: 'in' | 'out',
  variable: string,
  spec: VariableSpec | undefined,
  types: VariableType[],
) {
  const object = typeof spec === 'object' && !Array.isArray(spec) ? spec : {};
  const result: VariableSchemaEntry = {
    id: variableId(node, side, variable),
    variable_name: variable,
    allowed_types: types.map((type) => ({ type })),
  };
  if (object.display_name !== undefined) result.display_name = object.display_name;
  if (object.description !== undefined) result.description = object.description;
  if (object.nullable !== undefined) result.is_nullable = object.nullable;
  if (object.optional !== undefined) result.is_optional = object.optional;
  if (object.default !== undefined) result.default = object.default;
  return result;
}

function declareOutputs(draft: Draft, problems: string[]): void {
  const schema: VariableSchema['schema'] = {};
  for (const [variable, spec] of Object.entries(draft.spec.outputs ?? {})) {
    const path = `${draft.path === 'inputs' ? 'inputs' : `${draft.path}.outputs`}.${variable}`;
    let types: VariableType[] = [];
    if (typeof spec === 'string') {
      if (isTypeName(spec)) types = [spec];
      else problems.push(`${path}: "${spec}" is not a type`);
    } else if (Array.isArray(spec)) types = spec;
    else if (spec.type !== undefined) types = typesOf(spec.type).map((t) => t.type);
    else problems.push(`${path}: give its type`);
    if (typeof spec === 'object' && !Array.isArray(spec) && (spec.from !== undefined || spec.value !== undefined))
      problems.push(`${path}: an output takes no from / value`);
    const e = entry(draft.name, 'out', variable, spec, types);
    schema[e.id] = e;
  }
  const routes = [...(draft.spec.routes ?? []), ...Object.keys(draft.spec.condition ?? {})];
  for (const route of routes) {
    const id = variableId(draft.name, 'out', route);
    const existing = schema[id];
    if (draft.spec.condition === undefined && !existing) {
      problems.push(`${draft.path}.routes: "${route}" is not an output of the node`);
      continue;
    }
    schema[id] = existing ?? { id, variable_name: route, allowed_types: [{ type: 'bool' }] };
  }
  if (routes.length > 0) {
    draft.node.routes = Object.fromEntries(
      routes.map((route) => {
        const id = variableId(draft.name, 'out', route);
        return [id, { id, name: route }];
      }),
    );
    draft.node.properties = ['route'];
  }
  if (draft.name !== outputNodeName) draft.node.output_schema = { schema, variable_addition_allowed: false };
}

/** Input variables, their mappings and fixed values; returns the nodes they map from, in order. */
function declareInputs(draft: Draft, drafts: Map<string, Draft>, problems: string[]): string[] {
  const schema: VariableSchema['schema'] = {};
  const mappings: NonNullable<WorkflowNode['variable_mappings']> = {};
  const fixed: Record<string, unknown> = {};
  const sources: string[] = [];
  for (const [variable, spec] of Object.entries(draft.spec.inputs ?? {})) {
    const path = `${draft.path === 'results' ? 'results' : `${draft.path}.inputs`}.${variable}`;
    const object = typeof spec === 'object' && !Array.isArray(spec) ? spec : undefined;
    const from = typeof spec === 'string' && !isTypeName(spec) ? spec : object?.from;
    let types: VariableType[] | undefined =
      typeof spec === 'string' && isTypeName(spec)
        ? [spec]
        : Array.isArray(spec)
          ? spec
          : object?.type !== undefined
            ? typesOf(object.type).map((t) => t.type)
            : undefined;
    const id = variableId(draft.name, 'in', variable);
    if (from !== undefined) {
      const source = resolveReference(from, drafts);
      if (typeof source === 'string') problems.push(`${path}: ${source}`);
      else {
        mappings[id] = { from_node_id: source.node.node.id, from_variable_id: source.variable.id };
        types ??= source.variable.allowed_types.map((t) => t.type);
        if (!sources.includes(source.node.name)) sources.push(source.node.name);
      }
    } else if (object?.value !== undefined) {
      fixed[id] = object.value;
      types ??= [inferType(object.value)];
    }
    if (types === undefined) {
      if (from === undefined) problems.push(`${path}: give its type, a from or a value`);
      types = [];
    }
    schema[id] = entry(draft.name, 'in', variable, spec, types);
  }
  draft.node.input_schema = { schema, variable_addition_allowed: false };
  if (Object.keys(mappings).length > 0) draft.node.variable_mappings = mappings;
  if (Object.keys(fixed).length > 0) draft.node.fixed_values = fixed;
  return sources;
}

function resolveReference(
  reference: string,
  drafts: Map<string, Draft>,
): { node: Draft; variable: VariableSchemaEntry } | string {
  const dot = reference.indexOf('.');
  if (dot < 0) return `"${reference}" is neither a type nor a node.variable reference`;
  const nodeName = reference.slice(0, dot);
  const variableName = reference.slice(dot + 1);
  const node = drafts.get(nodeName);
  if (!node) return `"${reference}": no node named "${nodeName}"`;
  const variable = node.node.output_schema?.schema[variableId(nodeName, 'out', variableName)];
  if (!variable) return `"${reference}": node "${nodeName}" has no output "${variableName}"`;
  return { node, variable };
}

function toEdge(
  entry: AfterEntry,
  draft: Draft,
  drafts: Map<string, Draft>,
  problems: string[],
): WorkflowEdge | undefined {
  const path = draft.path === 'results' ? 'results_after' : `${draft.path}.after`;
  const target = afterTarget(entry);
  const from = drafts.get(target.node);
  if (!from) {
    problems.push(`${path}: no node named "${target.node}"`);
    return undefined;
  }
  const edge: Omit<WorkflowEdge, 'id'> = { from_node_id: from.node.id, to_node_id: draft.node.id };
  if (target.route !== undefined) {
    const routeId = variableId(target.node, 'out', target.route);
    if (!from.node.routes?.[routeId]) {
      problems.push(`${path}: node "${target.node}" has no route "${target.route}"`);
      return undefined;
    }
    edge.route_id = routeId;
    if (target.negated) edge.route_complement = true;
  }
  const id = nameId('edge', target.node, draft.name, target.route ?? '', target.negated ? 'not' : '');
  return { id, ...edge };
}

/** The catalog's Field objects of a node's variables: a code node's inputs and outputs are the node's. */
function codeFields(schema: VariableSchema | undefined): Record<string, CodeField> {
  const fields: Record<string, CodeField> = {};
  Object.values(schema?.schema ?? {}).forEach((entry, index) => {
    fields[entry.variable_name] = {
      id: String(index + 1),
      variableName: entry.variable_name,
      displayName: entry.display_name ?? entry.variable_name,
      // A list of files is an array of file URLs to the code, as the engine reads array_files.
      allowedTypes: entry.allowed_types.map((t) => ({ type: t.type === 'array_files' ? 'array' : t.type })),
      ...(entry.description !== undefined ? { description: entry.description } : {}),
      isOptional: entry.is_optional ?? false,
      isRemovable: true,
    };
  });
  return fields;
}

/** Each declared code node registered (or found unchanged) in the target catalog; its node then runs that version. */
async function registerCode(
  drafts: Map<string, Draft>,
  declared: Map<string, string>,
  catalog: CatalogIds,
  problems: string[],
): Promise<void> {
  for (const [name, sourceCode] of declared) {
    const draft = drafts.get(name);
    const code = draft?.spec.code;
    if (!draft || !code || 'id' in code) continue;
    const body = {
      name: code.name,
      ...(code.description !== undefined ? { description: code.description } : {}),
      sourceCode,
      inputs: codeFields(draft.node.input_schema),
      outputs: codeFields(draft.node.output_schema),
    };
    const sha256 = createHash('sha256').update(JSON.stringify(body)).digest('hex');
    const found = await catalog.code(name, { body, sha256 });
    if ('missing' in found) problems.push(`${draft.path}.code: ${found.missing}`);
    else
      draft.node.process = {
        code_id: found.found.codeId,
        code_version_id: found.found.versionId,
        source_sha256: sha256,
      };
  }
}
