import { randomUUID } from 'node:crypto';
import type { WorkflowEdge, WorkflowGraph, WorkflowNode } from '../../src/domain/graph.js';
import type { VariableSchema, VariableSchemaEntry } from '../../src/domain/variables.js';
import type { VariableType } from '../../src/domain/vocabulary.js';

/** One variable of a node's schema; a fresh id unless given. */
export interface Var {
  id?: string;
  name: string;
  type?: VariableType;
  nullable?: boolean;
  optional?: boolean;
  tags?: VariableSchemaEntry['tags'];
}

export function vars(entries: Var[]): VariableSchema {
  const schema: Record<string, VariableSchemaEntry> = {};
  for (const e of entries) {
    const id = e.id ?? randomUUID();
    schema[id] = {
      id,
      variable_name: e.name,
      allowed_types: [{ type: e.type ?? 'str' }],
      ...(e.nullable ? { is_nullable: true } : {}),
      ...(e.optional ? { is_optional: true } : {}),
      ...(e.tags ? { tags: e.tags } : {}),
    };
  }
  return { schema, variable_addition_allowed: false };
}

/**
 * The one graph builder of the tests: nodes and edges keyed by id, as the API
 * takes them and as the engine reads them. Adding a node returns its id; an
 * edge's ends are node ids or the names of nodes (unique in the graph); any
 * other string is kept as is, for tests of dangling edges.
 */
export class Graph implements WorkflowGraph {
  nodes: Record<string, WorkflowNode> = {};
  edges: Record<string, WorkflowEdge> = {};

  node(fields: Omit<WorkflowNode, 'id'> & { id?: string }): string {
    const id = fields.id ?? randomUUID();
    this.nodes[id] = { ...fields, id };
    return id;
  }

  /** A node with a name and a type only (a code node gets a no-op Python source): for the pure engine tests. */
  bare(name: string, type: WorkflowNode['type'] = 'code'): string {
    return this.node(
      type === 'code'
        ? { name, type, handler_class: 'python_code', process: { source: 'def main(inputs):\n    return {}\n' } }
        : { name, type },
    );
  }

  input(inputs: Var[]): string {
    return this.node({ name: 'Workflow Input', type: 'input', output_schema: vars(inputs) });
  }

  output(results: Var[]): string {
    return this.node({ name: 'Workflow Output', type: 'output', input_schema: vars(results) });
  }

  python(name: string, source: string, inputs: Var[], outputs: Var[], extra: Partial<WorkflowNode> = {}): string {
    return this.node({
      name,
      type: 'code',
      handler_class: 'python_code',
      process: { source },
      input_schema: vars(inputs),
      output_schema: vars(outputs),
      ...extra,
    });
  }

  /** A condition node with one route `routeId` (its bool output `matches`) whose rules are `rules`. */
  condition(name: string, inputs: Var[], routeId: string, rules: Record<string, unknown>): string {
    return this.node({
      name,
      type: 'condition',
      handler_class: 'condition',
      input_schema: vars(inputs),
      output_schema: {
        schema: { [routeId]: { id: routeId, variable_name: 'matches', allowed_types: [{ type: 'bool' }] } },
        variable_addition_allowed: false,
      },
      routes: { [routeId]: { id: routeId, name: 'matches' } },
      properties: ['route'],
      process: { routes: { [routeId]: rules } },
    });
  }

  /** The id of the one node named `name`. */
  id(name: string): string {
    const found = Object.values(this.nodes).filter((n) => n.name === name);
    if (found.length !== 1) throw new Error(`${found.length} nodes named ${name}`);
    return (found[0] as WorkflowNode).id;
  }

  edge(from: string, to: string, extra: Partial<WorkflowEdge> = {}): string {
    const id = randomUUID();
    this.edges[id] = { id, from_node_id: this.ref(from), to_node_id: this.ref(to), ...extra };
    return id;
  }

  /** Edges from each node to the next. */
  chain(...nodes: string[]): void {
    nodes.slice(1).forEach((to, i) => this.edge(nodes[i] as string, to));
  }

  /** An edge taken when the one route of condition `from` is true (with `complement`, when it is not). */
  route(from: string, to: string, complement = false): string {
    const routeId = Object.keys(this.nodes[this.ref(from)]?.routes ?? {})[0];
    if (!routeId) throw new Error(`${from} has no route`);
    return this.edge(from, to, { route_id: routeId, ...(complement ? { route_complement: true } : {}) });
  }

  body(): { nodes: Record<string, WorkflowNode>; edges: Record<string, WorkflowEdge> } {
    return { nodes: this.nodes, edges: this.edges };
  }

  /** A node id, the id of the node named so, or (for tests of dangling edges) the string as is. */
  private ref(idOrName: string): string {
    if (idOrName in this.nodes) return idOrName;
    return Object.values(this.nodes).some((n) => n.name === idOrName) ? this.id(idOrName) : idOrName;
  }
}

/** input(a: float) → one Python node `name` (a: float → b: float) → output(b); the graph and its node ids. */
export function floatChain(
  name: string,
  source: string,
  extra: Partial<WorkflowNode> = {},
): { graph: Graph; input: string; code: string; output: string } {
  const graph = new Graph();
  const input = graph.input([{ name: 'a', type: 'float' }]);
  const code = graph.python(name, source, [{ name: 'a', type: 'float' }], [{ name: 'b', type: 'float' }], extra);
  const output = graph.output([{ name: 'b', type: 'float' }]);
  graph.chain(input, code, output);
  return { graph, input, code, output };
}

/** input(text) → one Python node `name` (text → text) → output(text). */
export function textChain(name: string, source: string, extra: Partial<WorkflowNode> = {}): Graph {
  const g = new Graph();
  g.chain(
    g.input([{ name: 'text' }]),
    g.python(name, source, [{ name: 'text' }], [{ name: 'text' }], extra),
    g.output([{ name: 'text' }]),
  );
  return g;
}

/** A Python `main(inputs)` whose body is `body`. */
export function py(body: string): string {
  return `def main(inputs):\n${body
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n')}\n`;
}

/** input(text) → python sleeping `seconds` → output(text) */
export function sleeper(seconds: number): Graph {
  return textChain(
    'Sleep',
    `import time\ndef main(inputs):\n    time.sleep(${seconds})\n    return {"text": inputs["text"]}\n`,
    { execution: { timeout_ms: 30_000 } },
  );
}
