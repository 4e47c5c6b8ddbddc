import { randomUUID } from 'node:crypto';
import type { WorkflowEdge, WorkflowNode } from '../../src/domain/graph.js';
import type { VariableSchema, VariableSchemaEntry } from '../../src/domain/variables.js';
import type { VariableType } from '../../src/domain/vocabulary.js';
import '../support/branch-kind.js';
import type { TestService } from '../support/harness.js';

export function variables(
  entries: Array<{ id?: string; name: string; type?: VariableType; tags?: VariableSchemaEntry['tags'] }>,
): VariableSchema {
  const schema: Record<string, VariableSchemaEntry> = {};
  for (const entry of entries) {
    const id = entry.id ?? randomUUID();
    schema[id] = {
      id,
      variable_name: entry.name,
      allowed_types: [{ type: entry.type ?? 'str' }],
      ...(entry.tags ? { tags: entry.tags } : {}),
    };
  }
  return { schema, variable_addition_allowed: false };
}

/** A mutable graph under construction: nodes and edges keyed by id, as the API takes them. */
export class GraphBuilder {
  nodes: Record<string, WorkflowNode> = {};
  edges: Record<string, WorkflowEdge> = {};

  node(fields: Omit<WorkflowNode, 'id'> & { id?: string }): string {
    const id = fields.id ?? randomUUID();
    this.nodes[id] = { ...fields, id };
    return id;
  }

  edge(from: string, to: string, extra: Partial<WorkflowEdge> = {}): string {
    const id = randomUUID();
    this.edges[id] = { id, from_node_id: from, to_node_id: to, ...extra };
    return id;
  }

  body(): { nodes: Record<string, WorkflowNode>; edges: Record<string, WorkflowEdge> } {
    return { nodes: this.nodes, edges: this.edges };
  }
}

/**
 * input (text) → branch (route "big": true → A, false → B) → both into output.
 * The branch node reads `text` from the input node; output reads A's result.
 */
export function routedGraph(): {
  g: GraphBuilder;
  input: string;
  branch: string;
  a: string;
  b: string;
  output: string;
  routeId: string;
  textId: string;
} {
  const g = new GraphBuilder();
  const textId = randomUUID();
  const routeId = randomUUID();
  const input = g.node({
    name: 'Workflow Input',
    type: 'input',
    output_schema: variables([{ id: textId, name: 'text' }]),
  });
  const branchIn = randomUUID();
  const branch = g.node({
    name: 'Branch',
    type: 'branch',
    handler_class: 'test_branch',
    process: { threshold: 3 },
    input_schema: variables([{ id: branchIn, name: 'value' }]),
    output_schema: variables([{ id: routeId, name: 'big', type: 'bool' }]),
    routes: { [routeId]: { id: routeId, name: 'big' } },
    properties: ['route'],
    variable_mappings: { [branchIn]: { from_node_id: input, from_variable_id: textId } },
  });
  const a = g.node({ name: 'A', type: 'branch', handler_class: 'test_branch', process: { threshold: 1 } });
  const b = g.node({ name: 'B', type: 'branch', handler_class: 'test_branch', process: { threshold: 2 } });
  const resultId = randomUUID();
  const output = g.node({
    name: 'Workflow Output',
    type: 'output',
    input_schema: variables([{ id: resultId, name: 'result' }]),
    fixed_values: { [resultId]: 'done' },
  });
  g.edge(input, branch);
  g.edge(branch, a, { route_id: routeId });
  g.edge(branch, b, { route_id: routeId, route_complement: true });
  g.edge(a, output);
  g.edge(b, output);
  return { g, input, branch, a, b, output, routeId, textId };
}

export interface Violation {
  path: string;
  message: string;
}

export function violations(body: Record<string, unknown>): Violation[] {
  return (body.metadata as { violations?: Violation[] } | undefined)?.violations ?? [];
}

export async function countWorkflows(svc: TestService): Promise<number> {
  const row = await svc.service.context.store.db
    .selectFrom('workflows')
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function countVersions(svc: TestService): Promise<number> {
  const row = await svc.service.context.store.db
    .selectFrom('workflow_versions')
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** A key of this organization for a new member, with the given grants and scope. */
export async function createKey(svc: TestService, grants: string[], workspaceIds?: string[]): Promise<string> {
  const user = await svc.admin('POST', '/admin/users', {
    email: `${randomUUID()}@example.com`,
    name: 'member',
    organizationId: svc.organizationId,
  });
  const key = await svc.admin('POST', '/admin/keys', {
    organizationId: svc.organizationId,
    userId: user.body.id,
    name: 'scoped',
    grants,
    ...(workspaceIds ? { workspaceIds } : {}),
  });
  if (key.status !== 201) throw new Error(`key creation failed: ${key.text}`);
  return String(key.body.key);
}

/** Another organization with a workspace and a full key. */
export async function otherOrganization(
  svc: TestService,
  grants: string[] = ['workflow:full'],
): Promise<{ workspaceId: string; key: string }> {
  const org = await svc.admin('POST', '/admin/organizations', { name: `other-${randomUUID()}` });
  const organizationId = String(org.body.id);
  const workspace = await svc.admin('POST', `/admin/organizations/${organizationId}/workspaces`, { name: 'theirs' });
  const user = await svc.admin('POST', '/admin/users', {
    email: `${randomUUID()}@example.com`,
    name: 'them',
    organizationId,
  });
  const key = await svc.admin('POST', '/admin/keys', {
    organizationId,
    userId: user.body.id,
    name: 'theirs',
    grants,
  });
  return { workspaceId: String(workspace.body.id), key: String(key.body.key) };
}
