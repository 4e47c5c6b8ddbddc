import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type CaseflowClient, type paths } from '../../src/client/index.js';
import { answered, startTestService, type TestService } from '../support/harness.js';
import { countVersions, countWorkflows, violations } from './support.js';
import { Graph, vars } from '../support/graphs.js';
import { routedGraph } from '../support/branch-kind.js';
import { newCaller, newKey, newWorkspace } from '../support/keys.js';

type CreateBody = paths['/api/v1/workflow']['post']['requestBody']['content']['application/json'];

describe('POST /api/v1/workflow', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => {
    await svc.stop();
  });

  /** Created (201) through the typed client, as `client` in `workspaceId`. */
  const created = (body: CreateBody, client: CaseflowClient = svc.client, workspaceId = svc.workspaceId) =>
    answered(client.POST('/api/v1/workflow', { params: { header: { 'x-workspace-id': workspaceId } }, body }), 201);
  const details = (workflowId: string) =>
    answered(svc.client.GET('/api/v1/workflow/{workflowId}', { params: { path: { workflowId } } }), 200);

  /** Untyped: the refusals send no key, no or a bad x-workspace-id, and bodies the contract refuses. */
  const create = (body: unknown, options: { key?: string | null; workspaceId?: string | null } = {}) =>
    svc.request('POST', '/api/v1/workflow', {
      body,
      key: options.key,
      headers: options.workspaceId === null ? {} : { 'x-workspace-id': options.workspaceId ?? svc.workspaceId },
    });

  /** Sends a request that must fail with this status and leave no workflow behind. */
  async function rejected(
    status: number,
    body: unknown,
    options: { key?: string | null; workspaceId?: string | null } = {},
  ) {
    const before = [await countWorkflows(svc), await countVersions(svc)];
    const res = await create(body, options);
    expect(res.status, res.text).toBe(status);
    expect(res.body).toMatchObject({ statusCode: status, path: '/api/v1/workflow' });
    expect([await countWorkflows(svc), await countVersions(svc)]).toEqual(before);
    return res;
  }

  it('creates a workflow with the default input and output nodes joined by one edge', async () => {
    const res = await created({ name: 'Default', description: 'd', orgUnitIds: ['unit-a', 'unit-a', 'unit-b'] });
    expect(res).toEqual({
      workflowId: expect.any(String),
      entityId: expect.any(String),
      workflowVersionId: expect.any(String),
      builderType: 'SERVICE_V2',
    });
    expect(res.entityId).not.toBe(res.workflowId);
    const read = await details(res.workflowId);
    expect(read).toMatchObject({
      name: 'Default',
      description: 'd',
      activeStatus: 'inactive',
      orgUnitIds: ['unit-a', 'unit-b'],
      workspaceId: svc.workspaceId,
    });
    expect(read.version).toMatchObject({
      workflowVersionId: res.workflowVersionId,
      workflowVersionNumber: 1,
      status: 'inactive',
    });
    const nodes = Object.values(read.nodes);
    expect(nodes.map((n) => [n.name, n.type]).sort()).toEqual([
      ['Workflow Input', 'input'],
      ['Workflow Output', 'output'],
    ]);
    const edges = Object.values(read.edges);
    expect(edges).toHaveLength(1);
    const byType = Object.fromEntries(nodes.map((n) => [n.type, n.id]));
    expect(edges[0]).toMatchObject({ from_node_id: byType.input, to_node_id: byType.output });
  });

  it('creates an active workflow from a routed graph', async () => {
    const { g } = routedGraph();
    const res = await created({ name: 'Routed', activeStatus: 'active', ...g.body() });
    const read = await details(res.workflowId);
    expect(read).toMatchObject({ activeStatus: 'active', nodes: g.nodes, edges: g.edges });
    expect(read.jobPayloadSchema).toMatchObject({
      text: { variable_name: 'text', type: 'str', is_nullable: false, tags: [] },
    });
    expect(read.resultsSchema).toMatchObject({ result: { variable_name: 'result', type: 'str' } });
  });

  it('requires a key (401) and a UUID x-workspace-id (400)', async () => {
    await rejected(401, { name: 'x' }, { key: null });
    const missing = await rejected(400, { name: 'x' }, { workspaceId: null });
    expect(JSON.stringify(missing.body.metadata)).toContain('x-workspace-id');
    await rejected(400, { name: 'x' }, { workspaceId: 'not-a-uuid' });
  });

  it('answers 404 for an unknown workspace and 403 for another organization’s workspace', async () => {
    await rejected(404, { name: 'x' }, { workspaceId: randomUUID() });
    const other = await newCaller(svc, ['workflow:full'], { verified: false });
    await rejected(403, { name: 'x' }, { workspaceId: other.workspaceId });
    // ... and the other organization's key cannot create in ours.
    await rejected(403, { name: 'x' }, { key: other.key });
  });

  it('answers 403 for a key scoped to other workspaces or lacking Workflow: Full, before looking at the body', async () => {
    const otherWorkspace = await newWorkspace(svc);
    const scoped = (await newKey(svc, ['workflow:full'], { workspaceIds: [otherWorkspace] })).key;
    await rejected(403, { name: 'x' }, { key: scoped });
    const readOnly = (await newKey(svc, ['workflow:read', 'case:full'])).key;
    await rejected(403, { name: '' }, { key: readOnly });
    // The scoped key does work in its own workspace.
    await created({ name: 'mine' }, createClient({ baseUrl: svc.url, key: scoped }), otherWorkspace);
  });

  it('validates the body: name, activeStatus, orgUnitIds limit, node shape', async () => {
    const noName = await rejected(400, {});
    expect(noName.body.errorCode).toBe('VALIDATION_ERROR');
    expect((noName.body.metadata as { fields: Array<{ field: string }> }).fields.map((f) => f.field)).toContain(
      'body.name',
    );
    await rejected(400, { name: '   ' });
    await rejected(400, { name: 'x', activeStatus: 'on' });
    await rejected(400, { name: 'x', orgUnitIds: Array.from({ length: 101 }, (_, i) => `u${i}`) });
    await created({ name: 'hundred', orgUnitIds: Array.from({ length: 100 }, (_, i) => `u${i}`) });
    await rejected(400, { name: 'x', nodes: { a: { id: 'not-a-uuid', name: 'n', type: 'input' } }, edges: {} });
    await rejected(400, { name: 'x', nodes: [], edges: {} });
  });

  it('rejects map keys that differ from ids and edges naming missing nodes', async () => {
    const { g, a } = routedGraph();
    const node = g.nodes[a];
    if (!node) throw new Error('no node');
    const wrongKey = Object.fromEntries(
      Object.entries({ ...g.nodes, [randomUUID()]: node }).filter(([key]) => key !== a),
    );
    const res = await rejected(400, { name: 'x', nodes: wrongKey, edges: g.edges });
    expect(violations(res.body).some((v) => v.message.includes('differs from its id'))).toBe(true);

    const edgeKey = routedGraph();
    const [firstKey, firstEdge] = Object.entries(edgeKey.g.edges)[0] ?? [];
    if (!firstKey || !firstEdge) throw new Error('no edge');
    edgeKey.g.edges = Object.fromEntries(
      Object.entries({ ...edgeKey.g.edges, other: firstEdge }).filter(([key]) => key !== firstKey),
    );
    expect(violations((await rejected(400, { name: 'x', ...edgeKey.g.body() })).body)).toContainEqual({
      path: 'edges.other.id',
      message: expect.stringContaining('differs'),
    });

    const dangling = routedGraph();
    const ghost = randomUUID();
    const edge = dangling.g.edge(dangling.a, ghost);
    expect(violations((await rejected(400, { name: 'x', ...dangling.g.body() })).body)).toContainEqual({
      path: `edges.${edge}.to_node_id`,
      message: expect.stringContaining(ghost),
    });
  });

  it('requires exactly one input and one output node', async () => {
    const g = new Graph();
    g.node({ name: 'in', type: 'input' });
    const res = await rejected(400, { name: 'x', ...g.body() });
    expect(violations(res.body).map((v) => v.message)).toContain('Exactly one output node is required, found 0');
    const two = routedGraph();
    two.g.edge(two.g.node({ name: 'in2', type: 'input' }), two.output);
    expect(violations((await rejected(400, { name: 'x', ...two.g.body() })).body).map((v) => v.message)).toContain(
      'Exactly one input node is required, found 2',
    );
  });

  it('rejects a cycle and a node unreachable from the input node', async () => {
    const cyclic = routedGraph();
    cyclic.g.edge(cyclic.a, cyclic.branch);
    const res = await rejected(400, { name: 'x', ...cyclic.g.body() });
    expect(violations(res.body).find((v) => v.path === 'edges')?.message).toMatch(/cycle/);

    const island = routedGraph();
    const lonely = island.g.node({
      name: 'Lonely',
      type: 'branch',
      handler_class: 'test_branch',
      process: { threshold: 0 },
    });
    island.g.edge(lonely, island.output);
    expect(violations((await rejected(400, { name: 'x', ...island.g.body() })).body)).toContainEqual({
      path: `nodes.${lonely}`,
      message: expect.stringContaining('not reachable'),
    });
  });

  describe('routing: the four parts must agree', () => {
    it('(1) an edge naming a route the node does not declare', async () => {
      const { g, branch, routeId } = routedGraph();
      const node = g.nodes[branch];
      if (!node) throw new Error('no node');
      delete node.routes;
      const found = violations((await rejected(400, { name: 'x', ...g.body() })).body);
      expect(found.some((v) => v.path.endsWith('.route_id') && v.message.includes(routeId))).toBe(true);
    });

    it('(2) no bool output variable keyed by the route id, or one of another type', async () => {
      const { g, branch, routeId } = routedGraph();
      const node = g.nodes[branch];
      if (!node) throw new Error('no node');
      node.output_schema = vars([{ name: 'big', type: 'bool' }]);
      expect(violations((await rejected(400, { name: 'x', ...g.body() })).body)).toContainEqual({
        path: `nodes.${branch}.output_schema.schema.${routeId}`,
        message: expect.stringContaining('bool'),
      });
      node.output_schema = vars([{ id: routeId, name: 'big', type: 'str' }]);
      expect(violations((await rejected(400, { name: 'x', ...g.body() })).body)).toContainEqual({
        path: `nodes.${branch}.output_schema.schema.${routeId}.allowed_types`,
        message: expect.stringContaining('bool'),
      });
    });

    it('(3) routes without "route" in properties, and "route" without routes', async () => {
      const { g, branch, a } = routedGraph();
      const node = g.nodes[branch];
      const plain = g.nodes[a];
      if (!node || !plain) throw new Error('no node');
      node.properties = [];
      plain.properties = ['route'];
      const found = violations((await rejected(400, { name: 'x', ...g.body() })).body);
      expect(found).toContainEqual({ path: `nodes.${branch}.properties`, message: expect.stringContaining('route') });
      expect(found).toContainEqual({ path: `nodes.${a}.routes`, message: expect.stringContaining('no routes') });
    });

    it('(4) a route no edge carries, and route_complement without route_id', async () => {
      const { g, branch, routeId } = routedGraph();
      for (const edge of Object.values(g.edges)) {
        if (edge.route_id === routeId) {
          delete edge.route_id;
        }
      }
      const found = violations((await rejected(400, { name: 'x', ...g.body() })).body);
      expect(found).toContainEqual({
        path: `nodes.${branch}.routes.${routeId}`,
        message: expect.stringContaining('No edge'),
      });
      expect(found.some((v) => v.path.endsWith('.route_complement'))).toBe(true);
    });
  });

  it('checks process against the handler class and rejects unknown handler classes', async () => {
    const { g, a, b } = routedGraph();
    const nodeA = g.nodes[a];
    const nodeB = g.nodes[b];
    if (!nodeA || !nodeB) throw new Error('no node');
    nodeA.process = { threshold: 'high' };
    nodeB.handler_class = 'no_such_class';
    const found = violations((await rejected(400, { name: 'x', ...g.body() })).body);
    expect(found).toContainEqual({ path: `nodes.${a}.process.threshold`, message: expect.any(String) });
    expect(found).toContainEqual({ path: `nodes.${b}.handler_class`, message: 'Unknown handler_class no_such_class' });

    const untyped = routedGraph();
    const node = untyped.g.nodes[untyped.a];
    if (!node) throw new Error('no node');
    delete node.handler_class;
    expect(violations((await rejected(400, { name: 'x', ...untyped.g.body() })).body)).toContainEqual({
      path: `nodes.${untyped.a}.handler_class`,
      message: 'Node type branch needs a handler_class',
    });
  });

  it('rejects mappings to missing inputs, from non-upstream nodes or unknown outputs, and fixed values for missing inputs', async () => {
    const { g, branch, input, textId } = routedGraph();
    const node = g.nodes[branch];
    if (!node) throw new Error('no node');
    const [mappedId] = Object.keys(node.variable_mappings ?? {});
    if (!mappedId) throw new Error('no mapping');
    const missingInput = randomUUID();
    node.variable_mappings = {
      [mappedId]: { from_node_id: input, from_variable_id: 'nope' },
      [missingInput]: { from_node_id: input, from_variable_id: textId },
    };
    node.fixed_values = { ghost: 1 };
    const found = violations((await rejected(400, { name: 'x', ...g.body() })).body);
    expect(found).toContainEqual({
      path: `nodes.${branch}.variable_mappings.${mappedId}.from_variable_id`,
      message: expect.stringContaining('nope'),
    });
    expect(found).toContainEqual({
      path: `nodes.${branch}.variable_mappings.${missingInput}`,
      message: expect.stringContaining('no input variable'),
    });
    expect(found).toContainEqual({
      path: `nodes.${branch}.fixed_values.ghost`,
      message: expect.stringContaining('no input variable'),
    });

    // A is downstream of the branch: not a source for it.
    const downstream = routedGraph();
    const branchNode = downstream.g.nodes[downstream.branch];
    const [inputVar] = Object.keys(branchNode?.variable_mappings ?? {});
    if (!branchNode || !inputVar) throw new Error('no mapping');
    branchNode.variable_mappings = { [inputVar]: { from_node_id: downstream.a, from_variable_id: 'x' } };
    expect(violations((await rejected(400, { name: 'x', ...downstream.g.body() })).body)).toContainEqual({
      path: `nodes.${downstream.branch}.variable_mappings.${inputVar}.from_node_id`,
      message: expect.stringContaining('not upstream'),
    });
  });

  it('rejects duplicate variable names in the workflow input schema', async () => {
    const { g, input } = routedGraph();
    const node = g.nodes[input];
    if (!node?.output_schema) throw new Error('no node');
    Object.assign(node.output_schema.schema, vars([{ name: 'text' }]).schema);
    expect(
      violations((await rejected(400, { name: 'x', ...g.body() })).body).some((v) =>
        v.message.includes('variable_name text'),
      ),
    ).toBe(true);
  });
});
