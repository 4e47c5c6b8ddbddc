import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainError, type ErrorCode } from '../../src/errors.js';
import type { WorkflowGraph } from '../../src/domain/graph.js';
import { migrateToLatest, openStore, type Store } from '../../src/store/database.js';
import { TenancyRepo } from '../../src/store/tenancy-repo.js';
import { WorkflowRepo } from '../../src/store/workflow-repo.js';
import { RunVersions } from '../../src/definitions/run-version.js';
import { createPostgresSchema } from '../support/postgres.js';

function graph(name: string): WorkflowGraph {
  const input = randomUUID();
  const output = randomUUID();
  const edge = randomUUID();
  return {
    nodes: {
      [input]: { id: input, name: `${name} in`, type: 'input', handler_class: 'input' },
      [output]: { id: output, name: `${name} out`, type: 'output', handler_class: 'output' },
    },
    edges: { [edge]: { id: edge, from_node_id: input, to_node_id: output } },
  };
}

async function expectDomainError(promise: Promise<unknown>, errorCode: ErrorCode): Promise<DomainError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DomainError);
  expect((err as DomainError).errorCode).toBe(errorCode);
  return err as DomainError;
}

interface Backend {
  name: string;
  open(): Promise<{ store: Store; cleanup: () => Promise<void> }>;
}

const backends: Backend[] = [
  {
    name: 'sqlite',
    open: async () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'caseflow-wfrepo-'));
      const store = openStore(dir);
      return {
        store,
        cleanup: async () => {
          await store.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: 'postgres',
    open: async () => {
      const schema = await createPostgresSchema();
      const store = openStore(os.tmpdir(), schema.url);
      return {
        store,
        cleanup: async () => {
          await store.close();
          await schema.drop();
        },
      };
    },
  },
];

describe.each(backends)('WorkflowRepo on $name', (backend) => {
  let store: Store;
  let cleanup: () => Promise<void>;
  let repo: WorkflowRepo;
  let runs: RunVersions;
  let orgId: string;
  let otherOrgId: string;
  let workspaceId: string;
  let userId: string;

  beforeAll(async () => {
    ({ store, cleanup } = await backend.open());
    await migrateToLatest(store.db);
    const tenancy = new TenancyRepo(store.db);
    orgId = (await tenancy.createOrganization('org', true)).id;
    otherOrgId = (await tenancy.createOrganization('other', true)).id;
    workspaceId = (await tenancy.createWorkspace(orgId, 'ws')).id;
    userId = (await tenancy.createUser(`${randomUUID()}@example.com`, 'u')).id;
    repo = new WorkflowRepo(store.db);
    runs = new RunVersions(repo);
  });
  afterAll(async () => {
    await cleanup();
  });

  const create = (activeStatus: 'active' | 'inactive', name = 'wf') =>
    repo.create({
      organizationId: orgId,
      workspaceId,
      name,
      createdBy: userId,
      graph: graph(name),
      activeStatus,
      orgUnitIds: ['u1'],
    });

  /** What a case runs of version 1 of `workflow`. */
  const runnable = (workflow: { id: string; entityId: string }, v1: { id: string; name: string; graph: unknown }) => ({
    workflowId: workflow.id,
    entityId: workflow.entityId,
    versionId: v1.id,
    versionNumber: 1,
    organizationId: orgId,
    workspaceId,
    name: v1.name,
    graph: v1.graph,
  });

  it('creates version 1 and numbers every update one past the latest', async () => {
    const { workflow, version } = await create('inactive');
    expect(version.versionNumber).toBe(1);
    expect(workflow.entityId).not.toBe(workflow.id);
    expect(workflow.orgUnitIds).toEqual(['u1']);
    const v2 = await repo.update(workflow.id, { name: 'renamed', updatedBy: userId });
    const v3 = await repo.update(workflow.id, { graph: graph('third'), updatedBy: userId });
    expect(v2?.version.versionNumber).toBe(2);
    expect(v3?.version.versionNumber).toBe(3);
    // Carried over: v3 keeps v2's name, v2 keeps v1's graph.
    expect(v3?.version.name).toBe('renamed');
    expect(v2?.version.graph).toEqual(version.graph);
    expect((await repo.findWorkflow(workflow.id))?.name).toBe('renamed');
    expect((await repo.listVersionSummaries(workflow.id, { limit: 1000 })).map((v) => v.versionNumber)).toEqual([
      3, 2, 1,
    ]);
    expect(await repo.update(randomUUID(), { name: 'x', updatedBy: userId })).toBeUndefined();
  });

  it('numbers concurrent updates without gaps or duplicates', async () => {
    const { workflow } = await create('active');
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => repo.update(workflow.id, { name: `n${i}`, updatedBy: userId })),
    );
    expect(results.map((r) => r?.version.versionNumber).sort()).toEqual([2, 3, 4, 5, 6, 7]);
  });

  it('resolves the latest active version without a pin and any pinned version', async () => {
    const { workflow, version: v1 } = await create('active');
    const v2 = await repo.update(workflow.id, { activeStatus: 'inactive', graph: graph('draft'), updatedBy: userId });
    const run = await runs.resolve(orgId, { workflowId: workflow.id }, {});
    expect(run).toMatchObject({
      versionId: v1.id,
      versionNumber: 1,
      activeStatus: 'active',
      workspaceId,
      entityId: workflow.entityId,
    });
    const pinned = await runs.resolve(orgId, { workflowId: workflow.id }, { versionNumber: 2 });
    expect(pinned).toMatchObject({ versionId: v2?.version.id, activeStatus: 'inactive' });
    expect(
      (await runs.resolve(orgId, { workflowId: workflow.id }, { versionId: v2?.version.id, versionNumber: 1 }))
        .versionNumber,
    ).toBe(2);
    await repo.setVersionStatus(workflow.id, v2?.version.id ?? '', 'active');
    expect((await runs.resolve(orgId, { workflowId: workflow.id }, {})).versionNumber).toBe(2);
    // One active version at a time: activating v2 deactivated v1.
    expect((await repo.listVersionSummaries(workflow.id, { limit: 1000 })).map((v) => v.status)).toEqual([
      'active',
      'inactive',
    ]);
    expect((await repo.findRunnableVersion(v1.id))?.version).toEqual(runnable(workflow, v1));
    expect(await repo.findRunnableVersion(randomUUID())).toBeUndefined();
  });

  it('takes which version is active from the store on every run, as another process sharing it changed it', async () => {
    const { workflow, version: v1 } = await create('active');
    expect((await runs.resolve(orgId, { workflowId: workflow.id }, {})).versionId).toBe(v1.id);
    // Another process (its own repository, nothing shared in memory) publishes v2, then deactivates everything.
    const elsewhere = new WorkflowRepo(store.db);
    const v2 = await elsewhere.update(workflow.id, {
      graph: graph('published'),
      activeStatus: 'active',
      updatedBy: userId,
    });
    expect(await runs.resolve(orgId, { workflowId: workflow.id }, {})).toMatchObject({
      versionId: v2?.version.id,
      activeStatus: 'active',
      graph: v2?.version.graph,
    });
    await elsewhere.deactivateAllVersions(workflow.id);
    await expectDomainError(runs.resolve(orgId, { workflowId: workflow.id }, {}), 'CONFLICT');
    expect(await runs.resolve(orgId, { workflowId: workflow.id }, { versionId: v1.id })).toMatchObject({
      activeStatus: 'inactive',
    });
    // Rolled back to v1, whose content this process has kept: the same as the store's.
    await elsewhere.setVersionStatus(workflow.id, v1.id, 'active');
    expect(await runs.resolve(orgId, { workflowId: workflow.id }, {})).toEqual({
      ...runnable(workflow, v1),
      activeStatus: 'active',
    });
    // A case's version by id, for its own organization only, whether kept or not.
    expect((await runs.find(orgId, v1.id))?.graph).toEqual(v1.graph);
    expect(await runs.find(otherOrgId, v1.id)).toBeUndefined();
    expect(await new RunVersions(repo).find(otherOrgId, v1.id)).toBeUndefined();
    await expectDomainError(runs.resolve(otherOrgId, { workflowId: workflow.id }, {}), 'NOT_FOUND');
  });

  it('lets referenceEntityId win and accepts an entity id as workflowId', async () => {
    const a = await create('active', 'a');
    const b = await create('active', 'b');
    const run = await runs.resolve(orgId, { workflowId: a.workflow.id, referenceEntityId: b.workflow.entityId }, {});
    expect(run.workflowId).toBe(b.workflow.id);
    expect((await runs.resolve(orgId, { workflowId: a.workflow.entityId }, {})).workflowId).toBe(a.workflow.id);
  });

  it('gives 409 without an active version, 404 for unknown ids, versions and other organizations', async () => {
    const { workflow } = await create('inactive');
    const err = await expectDomainError(runs.resolve(orgId, { workflowId: workflow.id }, {}), 'CONFLICT');
    expect(err.metadata).toMatchObject({ reason: 'NO_ACTIVE_VERSION' });
    await expectDomainError(runs.resolve(orgId, { workflowId: randomUUID() }, {}), 'NOT_FOUND');
    await expectDomainError(runs.resolve(orgId, { referenceEntityId: workflow.id }, {}), 'NOT_FOUND');
    await expectDomainError(runs.resolve(orgId, { workflowId: workflow.id }, { versionNumber: 9 }), 'NOT_FOUND');
    await expectDomainError(runs.resolve(orgId, { workflowId: workflow.id }, { versionId: randomUUID() }), 'NOT_FOUND');
    await expectDomainError(runs.resolve(otherOrgId, { workflowId: workflow.id }, { versionNumber: 1 }), 'NOT_FOUND');
    await expectDomainError(runs.resolve(orgId, {}, {}), 'BAD_REQUEST');
  });

  it('deactivates every version at once', async () => {
    const { workflow } = await create('active');
    const v2 = await repo.update(workflow.id, { name: 'v2', updatedBy: userId });
    // The new version inherited 'active' and took over from v1.
    expect((await repo.listVersionSummaries(workflow.id, { limit: 1000 })).map((v) => v.status)).toEqual([
      'active',
      'inactive',
    ]);
    await repo.setVersionStatus(workflow.id, v2?.version.id ?? '', 'inactive');
    await repo.update(workflow.id, { name: 'v3', activeStatus: 'active', updatedBy: userId });
    await repo.setVersionStatus(
      workflow.id,
      (await repo.listVersionSummaries(workflow.id, { limit: 1000 }))[2]?.id ?? '',
      'active',
    );
    expect(await repo.deactivateAllVersions(workflow.id)).toBe(1);
    await expectDomainError(runs.resolve(orgId, { workflowId: workflow.id }, {}), 'CONFLICT');
    expect(await repo.setVersionStatus(workflow.id, randomUUID(), 'active')).toBeUndefined();
  });
});
