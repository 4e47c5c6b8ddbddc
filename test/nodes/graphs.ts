import { randomUUID } from 'node:crypto';
import type { WorkflowEdge, WorkflowGraph, WorkflowNode } from '../../src/domain/graph.js';

/** Graphs for the pure engine tests: nodes named by their key, no API in between. */
export class TestGraph implements WorkflowGraph {
  nodes: Record<string, WorkflowNode> = {};
  edges: Record<string, WorkflowEdge> = {};
  private readonly ids = new Map<string, string>();

  /** The node id of `name`. */
  id(name: string): string {
    const id = this.ids.get(name);
    if (!id) throw new Error(`no node ${name}`);
    return id;
  }

  add(name: string, fields: Partial<WorkflowNode> & Pick<WorkflowNode, 'type'>): this {
    const id = randomUUID();
    this.ids.set(name, id);
    this.nodes[id] = { name, ...fields, id };
    return this;
  }

  input(name = 'in'): this {
    return this.add(name, { type: 'input' });
  }

  output(name = 'out'): this {
    return this.add(name, { type: 'output' });
  }

  code(name: string): this {
    return this.add(name, {
      type: 'code',
      handler_class: 'python_code',
      process: { source: 'def main(inputs):\n    return {}\n' },
    });
  }

  /** A condition node with one route `route`, its bool output named `<name>_ok`. */
  condition(name: string): this {
    const route = `${name}-route`;
    return this.add(name, {
      type: 'condition',
      handler_class: 'condition',
      output_schema: {
        schema: { [route]: { id: route, variable_name: `${name}_ok`, allowed_types: [{ type: 'bool' }] } },
        variable_addition_allowed: false,
      },
      routes: { [route]: { id: route, name: route } },
      properties: ['route'],
      process: { routes: { [route]: { all: [{ left: { var: 'x' }, op: 'exists' }] } } },
    });
  }

  edge(from: string, to: string, extra: Partial<WorkflowEdge> = {}): this {
    const id = randomUUID();
    this.edges[id] = { id, from_node_id: this.id(from), to_node_id: this.id(to), ...extra };
    return this;
  }

  /** An edge taken when the route of condition `from` is true (or, with `complement`, when it is not). */
  route(from: string, to: string, complement = false): this {
    return this.edge(from, to, { route_id: `${from}-route`, ...(complement ? { route_complement: true } : {}) });
  }
}
