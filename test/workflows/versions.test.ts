import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type CaseflowClient, type paths } from '../../src/client/index.js';
import { answered, startTestService, type TestService } from '../support/harness.js';
import { countVersions, violations } from './support.js';
import { vars } from '../support/graphs.js';
import { routedGraph } from '../support/branch-kind.js';
import { newCaller, newKey, newWorkspace } from '../support/keys.js';

type PatchBody = paths['/api/v1/workflow/{workflowId}']['patch']['requestBody']['content']['application/json'];
type DetailsQuery = NonNullable<paths['/api/v1/workflow/{workflowId}']['get']['parameters']['query']>;
type LegacyQuery = NonNullable<paths['/workflow/{workflowId}']['get']['parameters']['query']>;
type VersionBody = NonNullable<
  paths['/api/v1/workflow/{workflowId}/activate']['post']['requestBody']
>['content']['application/json'];

describe('workflow versions, details, update and the deprecated read', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => {
    await svc.stop();
  });

  async function createRouted(activeStatus: 'active' | 'inactive') {
    const graph = routedGraph();
    const created = await answered(
      svc.client.POST('/api/v1/workflow', {
        params: { header: { 'x-workspace-id': svc.workspaceId } },
        body: { name: 'Versioned', description: 'first', activeStatus, ...graph.g.body() },
      }),
      201,
    );
    return { ...created, graph };
  }

  const patch = (workflowId: string, body: PatchBody, client: CaseflowClient = svc.client) =>
    client.PATCH('/api/v1/workflow/{workflowId}', { params: { path: { workflowId } }, body });
  const updated = (workflowId: string, body: PatchBody) => answered(patch(workflowId, body), 200);
  /** Untyped: the bodies the contract refuses. */
  const rawPatch = (id: string, body: unknown) => svc.request('PATCH', `/api/v1/workflow/${id}`, { body });
  const details = (workflowId: string, query: DetailsQuery = {}, client: CaseflowClient = svc.client) =>
    client.GET('/api/v1/workflow/{workflowId}', { params: { path: { workflowId }, query } });
  const legacy = (workflowId: string, query: LegacyQuery = {}, client: CaseflowClient = svc.client) =>
    client.GET('/workflow/{workflowId}', { params: { path: { workflowId }, query } });
  const activate = (workflowId: string, body: VersionBody = {}) =>
    svc.client.POST('/api/v1/workflow/{workflowId}/activate', { params: { path: { workflowId } }, body });
  const deactivate = (workflowId: string, body?: VersionBody, client: CaseflowClient = svc.client) =>
    client.POST('/api/v1/workflow/{workflowId}/deactivate', { params: { path: { workflowId } }, body });
  const as = (key: string) => createClient({ baseUrl: svc.url, key });

  it('cuts a new version per update and keeps the old ones readable', async () => {
    const wf = await createRouted('inactive');
    const renamed = await updated(wf.workflowId, { name: 'Renamed' });
    expect(renamed).toMatchObject({ workflowId: wf.workflowId, workflowVersionNumber: 2, status: 'inactive' });

    // A new input variable: only nodes change, edges are carried over.
    const { g, input } = wf.graph;
    const inputNode = g.nodes[input];
    if (!inputNode?.output_schema) throw new Error('no input node');
    Object.assign(
      inputNode.output_schema.schema,
      vars([{ name: 'attachment', type: 'file', tags: [{ variable_name: 'allowed_file_types', value: ['PDF'] }] }])
        .schema,
    );
    const v3 = await updated(wf.workflowId, { nodes: g.nodes, description: 'third' });
    expect(v3).toMatchObject({ workflowVersionNumber: 3 });

    const latest = await answered(details(wf.workflowId), 200);
    expect(latest).toMatchObject({
      name: 'Renamed',
      description: 'third',
      edges: g.edges,
      version: { workflowVersionNumber: 3 },
    });
    expect(latest.jobPayloadSchema).toMatchObject({
      attachment: { type: 'file', tags: [{ variable_name: 'allowed_file_types', value: ['PDF'] }] },
    });
    expect(latest.versions.map((v) => v.workflowVersionNumber)).toEqual([3, 2, 1]);

    const first = await answered(details(wf.workflowId, { version: 1 }), 200);
    expect(first).toMatchObject({
      version: { workflowVersionId: wf.workflowVersionId, name: 'Versioned', description: 'first' },
    });
    expect(Object.keys(first.jobPayloadSchema)).toEqual(['text']);
    const byId = await answered(details(wf.workflowId, { version: 1, workflowVersionId: v3.workflowVersionId }), 200);
    expect(byId).toMatchObject({ version: { workflowVersionNumber: 3 } });
  });

  it('pages the version list of the details read with versionsLimit and versionsCursor', async () => {
    const wf = await createRouted('active');
    for (const name of ['v2', 'v3', 'v4']) await updated(wf.workflowId, { name });
    const numbers = (body: { versions: Array<{ workflowVersionNumber: number }> }) =>
      body.versions.map((v) => v.workflowVersionNumber);
    const first = await answered(details(wf.workflowId, { versionsLimit: 3 }), 200);
    expect(numbers(first)).toEqual([4, 3, 2]);
    expect(first).toMatchObject({ latestVersion: { workflowVersionNumber: 4 }, nextVersionsCursor: 2 });
    const second = await answered(details(wf.workflowId, { versionsLimit: 3, versionsCursor: 2 }), 200);
    expect(numbers(second)).toEqual([1]);
    expect(second.nextVersionsCursor).toBeNull();
    // Untyped: query values the contract refuses.
    for (const bad of ['versionsLimit=0', 'versionsLimit=201', 'versionsCursor=abc']) {
      expect((await svc.request('GET', `/api/v1/workflow/${wf.workflowId}?${bad}`)).status, bad).toBe(400);
    }
  });

  it('validates updates like creation and changes nothing on a 4xx', async () => {
    const wf = await createRouted('active');
    const before = await countVersions(svc);
    const cyclic = wf.graph;
    cyclic.g.edge(cyclic.output, cyclic.input);
    const bad = await patch(wf.workflowId, { edges: cyclic.g.edges });
    expect(bad.response.status).toBe(400);
    expect(violations(bad.error).some((v) => v.message.includes('cycle'))).toBe(true);
    expect((await rawPatch(wf.workflowId, {})).status).toBe(400);
    expect((await rawPatch(wf.workflowId, { name: '' })).status).toBe(400);
    expect((await rawPatch(wf.workflowId, { activeStatus: 'maybe' })).status).toBe(400);
    expect((await patch('not-a-uuid', { name: 'x' })).response.status).toBe(400);
    expect((await patch(randomUUID(), { name: 'x' })).response.status).toBe(404);
    expect(await countVersions(svc)).toBe(before);
  });

  it('runs the latest active version unless pinned, through the deprecated read', async () => {
    const wf = await createRouted('active');
    const draft = await updated(wf.workflowId, { name: 'Draft', activeStatus: 'inactive' });
    expect(draft).toMatchObject({ workflowVersionNumber: 2, status: 'inactive' });

    const current = await answered(legacy(wf.workflowId), 200);
    expect(current).toMatchObject({
      workflowId: wf.workflowId,
      versionId: wf.workflowVersionId,
      versionNumber: 1,
      activeStatus: 'active',
    });
    expect(current.blueprint).toEqual({ nodes: wf.graph.g.nodes, edges: wf.graph.g.edges });
    expect(current.jobPayloadSchema).toEqual({
      text: {
        id: wf.graph.textId,
        variable_name: 'text',
        display_name: 'text',
        type: 'str',
        is_nullable: false,
        tags: [],
      },
    });
    const pinned = await answered(legacy(wf.workflowId, { version: 2 }), 200);
    expect(pinned).toMatchObject({ versionNumber: 2, activeStatus: 'inactive' });
    const byEntity = await answered(legacy(wf.entityId, { workflowVersionId: wf.workflowVersionId, version: 2 }), 200);
    expect(byEntity).toMatchObject({ workflowId: wf.workflowId, versionNumber: 1 });
    expect((await legacy(wf.workflowId, { version: 9 })).response.status).toBe(404);
    expect((await legacy(wf.workflowId, { workflowVersionId: randomUUID() })).response.status).toBe(404);
    // Untyped: a version the contract refuses.
    expect((await svc.request('GET', `/workflow/${wf.workflowId}?version=zero`)).status).toBe(400);
    expect((await legacy(randomUUID())).response.status).toBe(404);
  });

  it('activates a version (deactivating the others) and deactivates the workflow', async () => {
    const wf = await createRouted('inactive');
    const none = await legacy(wf.workflowId);
    expect(none.response.status).toBe(409);
    expect(none.error).toMatchObject({ errorCode: 'CONFLICT', metadata: { reason: 'NO_ACTIVE_VERSION' } });

    await updated(wf.workflowId, { name: 'v2' });
    const activated = await answered(activate(wf.workflowId), 200);
    expect(activated).toMatchObject({ activeStatus: 'active', activeVersionNumber: 2 });
    const rollback = await answered(activate(wf.workflowId, { workflowVersionNumber: 1 }), 200);
    expect(rollback).toMatchObject({
      activeStatus: 'active',
      activeVersionId: wf.workflowVersionId,
      activeVersionNumber: 1,
    });
    expect(await answered(legacy(wf.workflowId), 200)).toMatchObject({ versionNumber: 1 });
    const read = await answered(details(wf.workflowId), 200);
    expect(read.versions.map((v) => v.status)).toEqual(['inactive', 'active']);

    const v3 = await updated(wf.workflowId, { activeStatus: 'active' });
    expect(v3).toMatchObject({ workflowVersionNumber: 3, status: 'active' });
    const one = await answered(deactivate(wf.workflowId, { workflowVersionNumber: 3 }), 200);
    expect(one).toMatchObject({ activeStatus: 'inactive', activeVersionId: null });
    await answered(activate(wf.workflowId, { workflowVersionNumber: 2 }), 200);
    const all = await answered(deactivate(wf.workflowId), 200);
    expect(all).toMatchObject({ activeStatus: 'inactive', activeVersionNumber: null });
    expect((await legacy(wf.workflowId)).response.status).toBe(409);

    expect((await activate(wf.workflowId, { workflowVersionNumber: 7 })).response.status).toBe(404);
    // Untyped: a version id the contract refuses.
    expect(
      (await svc.request('POST', `/api/v1/workflow/${wf.workflowId}/activate`, { body: { workflowVersionId: 'nope' } }))
        .status,
    ).toBe(400);
  });

  it('reads with Workflow: Read, writes with Workflow: Full, only in the workflow’s workspace and organization', async () => {
    const wf = await createRouted('active');
    const reader = as((await newKey(svc, ['workflow:read'])).key);
    await answered(details(wf.workflowId, {}, reader), 200);
    await answered(legacy(wf.workflowId, {}, reader), 200);
    expect((await patch(wf.workflowId, { name: 'x' }, reader)).response.status).toBe(403);
    expect((await deactivate(wf.workflowId, undefined, reader)).response.status).toBe(403);

    const caseOnly = as((await newKey(svc, ['case:full'])).key);
    expect((await details(wf.workflowId, {}, caseOnly)).response.status).toBe(403);

    const scoped = as((await newKey(svc, ['workflow:full'], { workspaceIds: [await newWorkspace(svc)] })).key);
    expect((await details(wf.workflowId, {}, scoped)).response.status).toBe(403);

    const other = as((await newCaller(svc, ['workflow:full'], { verified: false })).key);
    const foreign = await details(wf.workflowId, {}, other);
    expect(foreign.response.status).toBe(403);
    expect(JSON.stringify(foreign.error)).not.toContain('Versioned');
    expect((await legacy(wf.workflowId, {}, other)).response.status).toBe(403);
    expect((await patch(wf.workflowId, { name: 'stolen' }, other)).response.status).toBe(403);
    expect((await svc.request('GET', `/api/v1/workflow/${wf.workflowId}`, { key: null })).status).toBe(401);
    expect(await answered(details(wf.workflowId), 200)).toMatchObject({ name: 'Versioned' });
  });

  it('documents the workflow endpoints, the deprecated one marked deprecated', async () => {
    const doc = await svc.request('GET', '/openapi.json', { key: null });
    const paths = doc.body.paths as Record<
      string,
      Record<string, { deprecated?: boolean; parameters?: Array<{ name: string }>; requestBody?: unknown }>
    >;
    expect(paths['/api/v1/workflow']?.post?.parameters?.map((p) => p.name)).toContain('x-workspace-id');
    expect(paths['/api/v1/workflow']?.post?.requestBody).toBeDefined();
    expect(paths['/api/v1/workflow/{workflowId}']?.get).toBeDefined();
    expect(paths['/api/v1/workflow/{workflowId}']?.patch?.requestBody).toBeDefined();
    expect(paths['/api/v1/workflow/{workflowId}/activate']?.post).toBeDefined();
    expect(paths['/api/v1/workflow/{workflowId}/deactivate']?.post).toBeDefined();
    expect(paths['/workflow/{workflowId}']?.get?.deprecated).toBe(true);
  });
});
