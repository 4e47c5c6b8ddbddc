import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.js';
import { countVersions, violations } from './support.js';
import { vars } from '../support/graphs.js';
import { routedGraph } from '../support/branch-kind.js';
import { newCaller, newKey, newWorkspace } from '../support/keys.js';

interface Created {
  workflowId: string;
  entityId: string;
  workflowVersionId: string;
}

describe('workflow versions, details, update and the deprecated read', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => {
    await svc.stop();
  });

  async function createRouted(
    activeStatus: 'active' | 'inactive',
  ): Promise<Created & { graph: ReturnType<typeof routedGraph> }> {
    const graph = routedGraph();
    const res = await svc.request('POST', '/api/v1/workflow', {
      body: { name: 'Versioned', description: 'first', activeStatus, ...graph.g.body() },
      headers: { 'x-workspace-id': svc.workspaceId },
    });
    expect(res.status, res.text).toBe(201);
    return { ...(res.body as unknown as Created), graph };
  }

  const patch = (id: string, body: unknown, key?: string) =>
    svc.request('PATCH', `/api/v1/workflow/${id}`, { body, key });

  it('cuts a new version per update and keeps the old ones readable', async () => {
    const wf = await createRouted('inactive');
    const renamed = await patch(wf.workflowId, { name: 'Renamed' });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body).toMatchObject({ workflowId: wf.workflowId, workflowVersionNumber: 2, status: 'inactive' });

    // A new input variable: only nodes change, edges are carried over.
    const { g, input } = wf.graph;
    const inputNode = g.nodes[input];
    if (!inputNode?.output_schema) throw new Error('no input node');
    Object.assign(
      inputNode.output_schema.schema,
      vars([{ name: 'attachment', type: 'file', tags: [{ variable_name: 'allowed_file_types', value: ['PDF'] }] }])
        .schema,
    );
    const v3 = await patch(wf.workflowId, { nodes: g.nodes, description: 'third' });
    expect(v3.body).toMatchObject({ workflowVersionNumber: 3 });

    const latest = await svc.request('GET', `/api/v1/workflow/${wf.workflowId}`);
    expect(latest.body).toMatchObject({
      name: 'Renamed',
      description: 'third',
      edges: g.edges,
      version: { workflowVersionNumber: 3 },
    });
    expect(latest.body.jobPayloadSchema).toMatchObject({
      attachment: { type: 'file', tags: [{ variable_name: 'allowed_file_types', value: ['PDF'] }] },
    });
    expect(
      (latest.body.versions as Array<{ workflowVersionNumber: number }>).map((v) => v.workflowVersionNumber),
    ).toEqual([3, 2, 1]);

    const first = await svc.request('GET', `/api/v1/workflow/${wf.workflowId}?version=1`);
    expect(first.body).toMatchObject({
      version: { workflowVersionId: wf.workflowVersionId, name: 'Versioned', description: 'first' },
    });
    expect(Object.keys(first.body.jobPayloadSchema as object)).toEqual(['text']);
    const byId = await svc.request(
      'GET',
      `/api/v1/workflow/${wf.workflowId}?version=1&workflowVersionId=${String(v3.body.workflowVersionId)}`,
    );
    expect(byId.body).toMatchObject({ version: { workflowVersionNumber: 3 } });
  });

  it('pages the version list of the details read with versionsLimit and versionsCursor', async () => {
    const wf = await createRouted('active');
    for (const name of ['v2', 'v3', 'v4']) expect((await patch(wf.workflowId, { name })).status).toBe(200);
    const numbers = (body: Record<string, unknown>) =>
      (body.versions as Array<{ workflowVersionNumber: number }>).map((v) => v.workflowVersionNumber);
    const first = await svc.request('GET', `/api/v1/workflow/${wf.workflowId}?versionsLimit=3`);
    expect(first.status, first.text).toBe(200);
    expect(numbers(first.body)).toEqual([4, 3, 2]);
    expect(first.body).toMatchObject({ latestVersion: { workflowVersionNumber: 4 }, nextVersionsCursor: 2 });
    const second = await svc.request('GET', `/api/v1/workflow/${wf.workflowId}?versionsLimit=3&versionsCursor=2`);
    expect(numbers(second.body)).toEqual([1]);
    expect(second.body.nextVersionsCursor).toBeNull();
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
    expect(bad.status).toBe(400);
    expect(violations(bad.body).some((v) => v.message.includes('cycle'))).toBe(true);
    expect((await patch(wf.workflowId, {})).status).toBe(400);
    expect((await patch(wf.workflowId, { name: '' })).status).toBe(400);
    expect((await patch(wf.workflowId, { activeStatus: 'maybe' })).status).toBe(400);
    expect((await patch('not-a-uuid', { name: 'x' })).status).toBe(400);
    expect((await patch(randomUUID(), { name: 'x' })).status).toBe(404);
    expect(await countVersions(svc)).toBe(before);
  });

  it('runs the latest active version unless pinned, through the deprecated read', async () => {
    const wf = await createRouted('active');
    const draft = await patch(wf.workflowId, { name: 'Draft', activeStatus: 'inactive' });
    expect(draft.body).toMatchObject({ workflowVersionNumber: 2, status: 'inactive' });

    const current = await svc.request('GET', `/workflow/${wf.workflowId}`);
    expect(current.status, current.text).toBe(200);
    expect(current.body).toMatchObject({
      workflowId: wf.workflowId,
      versionId: wf.workflowVersionId,
      versionNumber: 1,
      activeStatus: 'active',
    });
    expect(current.body.blueprint).toEqual({ nodes: wf.graph.g.nodes, edges: wf.graph.g.edges });
    expect(current.body.jobPayloadSchema).toEqual({
      text: {
        id: wf.graph.textId,
        variable_name: 'text',
        display_name: 'text',
        type: 'str',
        is_nullable: false,
        tags: [],
      },
    });
    const pinned = await svc.request('GET', `/workflow/${wf.workflowId}?version=2`);
    expect(pinned.body).toMatchObject({ versionNumber: 2, activeStatus: 'inactive' });
    const byEntity = await svc.request(
      'GET',
      `/workflow/${wf.entityId}?workflowVersionId=${wf.workflowVersionId}&version=2`,
    );
    expect(byEntity.body).toMatchObject({ workflowId: wf.workflowId, versionNumber: 1 });
    expect((await svc.request('GET', `/workflow/${wf.workflowId}?version=9`)).status).toBe(404);
    expect((await svc.request('GET', `/workflow/${wf.workflowId}?workflowVersionId=${randomUUID()}`)).status).toBe(404);
    expect((await svc.request('GET', `/workflow/${wf.workflowId}?version=zero`)).status).toBe(400);
    expect((await svc.request('GET', `/workflow/${randomUUID()}`)).status).toBe(404);
  });

  it('activates a version (deactivating the others) and deactivates the workflow', async () => {
    const wf = await createRouted('inactive');
    const none = await svc.request('GET', `/workflow/${wf.workflowId}`);
    expect(none.status).toBe(409);
    expect(none.body).toMatchObject({ errorCode: 'CONFLICT', metadata: { reason: 'NO_ACTIVE_VERSION' } });

    await patch(wf.workflowId, { name: 'v2' });
    const activated = await svc.request('POST', `/api/v1/workflow/${wf.workflowId}/activate`, { body: {} });
    expect(activated.body).toMatchObject({ activeStatus: 'active', activeVersionNumber: 2 });
    const rollback = await svc.request('POST', `/api/v1/workflow/${wf.workflowId}/activate`, {
      body: { workflowVersionNumber: 1 },
    });
    expect(rollback.body).toMatchObject({
      activeStatus: 'active',
      activeVersionId: wf.workflowVersionId,
      activeVersionNumber: 1,
    });
    expect((await svc.request('GET', `/workflow/${wf.workflowId}`)).body).toMatchObject({ versionNumber: 1 });
    const details = await svc.request('GET', `/api/v1/workflow/${wf.workflowId}`);
    expect((details.body.versions as Array<{ status: string }>).map((v) => v.status)).toEqual(['inactive', 'active']);

    const v3 = await patch(wf.workflowId, { activeStatus: 'active' });
    expect(v3.body).toMatchObject({ workflowVersionNumber: 3, status: 'active' });
    const one = await svc.request('POST', `/api/v1/workflow/${wf.workflowId}/deactivate`, {
      body: { workflowVersionNumber: 3 },
    });
    expect(one.body).toMatchObject({ activeStatus: 'inactive', activeVersionId: null });
    await svc.request('POST', `/api/v1/workflow/${wf.workflowId}/activate`, { body: { workflowVersionNumber: 2 } });
    const all = await svc.request('POST', `/api/v1/workflow/${wf.workflowId}/deactivate`);
    expect(all.body).toMatchObject({ activeStatus: 'inactive', activeVersionNumber: null });
    expect((await svc.request('GET', `/workflow/${wf.workflowId}`)).status).toBe(409);

    expect(
      (await svc.request('POST', `/api/v1/workflow/${wf.workflowId}/activate`, { body: { workflowVersionNumber: 7 } }))
        .status,
    ).toBe(404);
    expect(
      (await svc.request('POST', `/api/v1/workflow/${wf.workflowId}/activate`, { body: { workflowVersionId: 'nope' } }))
        .status,
    ).toBe(400);
  });

  it('reads with Workflow: Read, writes with Workflow: Full, only in the workflow’s workspace and organization', async () => {
    const wf = await createRouted('active');
    const reader = (await newKey(svc, ['workflow:read'])).key;
    expect((await svc.request('GET', `/api/v1/workflow/${wf.workflowId}`, { key: reader })).status).toBe(200);
    expect((await svc.request('GET', `/workflow/${wf.workflowId}`, { key: reader })).status).toBe(200);
    expect((await patch(wf.workflowId, { name: 'x' }, reader)).status).toBe(403);
    expect((await svc.request('POST', `/api/v1/workflow/${wf.workflowId}/deactivate`, { key: reader })).status).toBe(
      403,
    );

    const caseOnly = (await newKey(svc, ['case:full'])).key;
    expect((await svc.request('GET', `/api/v1/workflow/${wf.workflowId}`, { key: caseOnly })).status).toBe(403);

    const scoped = (await newKey(svc, ['workflow:full'], { workspaceIds: [await newWorkspace(svc)] })).key;
    expect((await svc.request('GET', `/api/v1/workflow/${wf.workflowId}`, { key: scoped })).status).toBe(403);

    const other = await newCaller(svc, ['workflow:full'], { verified: false });
    const foreign = await svc.request('GET', `/api/v1/workflow/${wf.workflowId}`, { key: other.key });
    expect(foreign.status).toBe(403);
    expect(foreign.text).not.toContain('Versioned');
    expect((await svc.request('GET', `/workflow/${wf.workflowId}`, { key: other.key })).status).toBe(403);
    expect((await patch(wf.workflowId, { name: 'stolen' }, other.key)).status).toBe(403);
    expect((await svc.request('GET', `/api/v1/workflow/${wf.workflowId}`, { key: null })).status).toBe(401);
    expect((await svc.request('GET', `/api/v1/workflow/${wf.workflowId}`)).body).toMatchObject({ name: 'Versioned' });
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
