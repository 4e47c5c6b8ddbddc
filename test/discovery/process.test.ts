import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processContentSchema } from '../../src/domain/discovery-process.js';
import { DiscoveryRepo } from '../../src/store/discovery-repo.js';
import { answered, startTestService, type TestService } from '../support/harness.js';
import {
  createProcess,
  expectError,
  patchProcess,
  postProcess,
  processBody,
  readProcess,
  snapshotProcess,
  violationPaths,
  type ProcessBody,
  type ProcessPatch,
} from './support.js';

type Step = ProcessBody['steps'][number];

const stepFields = [
  'id',
  'name',
  'description',
  'stepOrder',
  'stepType',
  'status',
  'owner',
  'locked',
  'duration',
  'durationUnit',
  'durationRange',
  'waitingTimeRange',
  'branchId',
  'branchLabel',
  'branchSourceStepId',
  'branchRejoinStepId',
  'branchOrder',
  'groupId',
  'inputs',
  'outputs',
  'integrations',
  'rules',
  'departments',
  'performers',
  'painPoints',
];

describe('discovered processes: create, read, update, snapshots', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => {
    await svc?.stop();
  });

  /** Untyped: bodies the contract refuses or does not name. */
  const rawPost = (body: unknown) =>
    svc.request('POST', '/api/v1/discovery/process', { body, headers: { 'x-workspace-id': svc.workspaceId } });
  const post = (body: ProcessBody) => postProcess(svc, body);
  const read = (id: string, versionId?: string) => answered(readProcess(svc, id, versionId), 200);
  const patch = (id: string, body: ProcessPatch) => patchProcess(svc, id, body);
  const updated = (id: string, body: ProcessPatch) => answered(patch(id, body), 200);
  const snapshot = (id: string) => answered(snapshotProcess(svc, id), 201);

  it('reads back every field of the contract, typed, with counts and merged integrations', async () => {
    const created = await rawPost({
      ...processBody(),
      stepCount: 99,
      branchCount: 99,
      organizationId: 'not-mine',
      workspaceId: 'not-mine',
    });
    expect(created.status, created.text).toBe(201);
    const p = await read(String(created.body.id));
    expect(p).toEqual(created.body);
    expect(p).toMatchObject({
      name: 'Customer onboarding',
      description: 'From signed contract to first invoice',
      status: 'approved',
      organizationId: svc.organizationId,
      workspaceId: svc.workspaceId,
      stepCount: 5,
      branchCount: 2,
      processOrigin: 'template-onboarding',
      parentProcessId: null,
      processInputs: [{ id: 'pin-1', text: 'Contract' }],
      processOutputs: [{ id: 'pout-1', text: 'Active customer' }],
      processRules: [{ id: 'prule-1', text: 'Onboarding within 5 days' }],
      milestone: { country: 'DE', industry: 'Insurance' },
      processVersionId: null,
      versionNumber: null,
    });
    // Process-level first, then steps in stepOrder; one per id and one per name.
    expect(p.processIntegrations).toEqual([
      { id: 'int-erp', text: 'SAP' },
      { id: 'int-crm', text: 'Salesforce' },
      { id: 'int-bureau', text: 'Credit bureau' },
    ]);
    expect(new Date(p.createdAt).toISOString()).toBe(p.createdAt);
    expect(p.updatedAt).toBe(p.createdAt);
    expect(p.customEdges).toEqual(processBody().customEdges);
    for (const step of p.steps) expect(Object.keys(step).sort()).toEqual([...stepFields].sort());
    const [s1, s2, s3] = p.steps;
    expect(s1).toMatchObject({
      locked: true,
      owner: 'Dana',
      duration: 30,
      durationUnit: 'minutes',
      durationRange: { min: { value: 20, unit: 'minutes' }, max: { value: 1, unit: 'hours' } },
      waitingTimeRange: { min: { value: 1, unit: 'days' }, max: { value: 2, unit: 'days' } },
      painPoints: [{ id: 'pain-1', text: 'Contracts arrive by fax' }],
    });
    expect(s2).toMatchObject({
      description: null,
      locked: false,
      duration: null,
      durationRange: null,
      branchId: null,
      groupId: null,
      inputs: [],
      painPoints: [],
    });
    expect(s3).toMatchObject({
      branchId: 'b-pass',
      branchLabel: 'Passed',
      branchSourceStepId: 's2',
      branchRejoinStepId: 's5',
      branchOrder: 0,
    });
  });

  it('refuses each broken rule with 400 naming where', async () => {
    const body = processBody();
    const base = body.steps;
    const withStep = (index: number, change: Record<string, unknown>) => ({
      ...body,
      steps: base.map((s, i) => (i === index ? { ...s, ...change } : s)),
    });
    const cases: Array<[string, unknown, string]> = [
      ['duplicate step id', withStep(1, { id: 's1' }), 'steps.1.id'],
      [
        'edge from an unknown step',
        { ...body, customEdges: [{ id: 'x', sourceStepId: 'nope', targetStepId: 's2' }] },
        'customEdges.0.sourceStepId',
      ],
      [
        'edge to an unknown step',
        { ...body, customEdges: [{ id: 'x', sourceStepId: 's1', targetStepId: 'nope' }] },
        'customEdges.0.targetStepId',
      ],
      [
        'duplicate edge id',
        {
          ...body,
          customEdges: [
            { id: 'x', sourceStepId: 's1', targetStepId: 's2' },
            { id: 'x', sourceStepId: 's2', targetStepId: 's5' },
          ],
        },
        'customEdges.1.id',
      ],
      ['branch field without branchId', withStep(0, { branchLabel: 'orphan' }), 'steps.0.branchLabel'],
      ['branch without a source', withStep(2, { branchSourceStepId: null }), 'steps.2.branchSourceStepId'],
      ['branch without an order', withStep(2, { branchOrder: null }), 'steps.2.branchOrder'],
      ['branch from an unknown step', withStep(2, { branchSourceStepId: 'ghost' }), 'steps.2.branchSourceStepId'],
      ['rejoin into an unknown step', withStep(2, { branchRejoinStepId: 'ghost' }), 'steps.2.branchRejoinStepId'],
      ['rejoin into its own source', withStep(2, { branchRejoinStepId: 's2' }), 'steps.2.branchRejoinStepId'],
      ['branch leaving from inside itself', withStep(2, { branchSourceStepId: 's3' }), 'steps.2.branchSourceStepId'],
      ['two branches with one order', withStep(3, { branchOrder: 0 }), 'steps.3.branchOrder'],
      [
        'steps of one branch disagreeing',
        { ...body, steps: [...base, { ...base[2], id: 's6', stepOrder: 2, branchLabel: 'Other' }] },
        'steps.5.branchLabel',
      ],
      [
        'duration range with min > max across units',
        withStep(0, { durationRange: { min: { value: 2, unit: 'hours' }, max: { value: 90, unit: 'minutes' } } }),
        'steps.0.durationRange',
      ],
      [
        'waiting range with min > max',
        withStep(0, { waitingTimeRange: { min: { value: 2, unit: 'weeks' }, max: { value: 13, unit: 'days' } } }),
        'steps.0.waitingTimeRange',
      ],
      ['unknown unit', withStep(0, { durationUnit: 'fortnights' }), 'steps.0.durationUnit'],
      ['duration without a unit', withStep(0, { durationUnit: null }), 'steps.0.durationUnit'],
      ['stepOrder taken on the main line', withStep(1, { stepOrder: 1 }), 'steps.1.stepOrder'],
      [
        'duplicate id in a { id, text } list',
        withStep(0, {
          inputs: [
            { id: 'a', text: 'x' },
            { id: 'a', text: 'y' },
          ],
        }),
        'steps.0.inputs',
      ],
      [
        'duplicate id in a process list',
        {
          ...body,
          processRules: [
            { id: 'r', text: 'x' },
            { id: 'r', text: 'y' },
          ],
        },
        'processRules',
      ],
      ['no name', { ...body, name: '' }, 'name'],
      ['no steps', { ...body, steps: undefined }, 'steps'],
      ['a parent that does not exist', { ...body, parentProcessId: crypto.randomUUID() }, 'parentProcessId'],
      ['a parent that is not a UUID', { ...body, parentProcessId: 'p-1' }, 'parentProcessId'],
      [
        'over 1000 steps',
        {
          ...body,
          customEdges: [],
          steps: Array.from({ length: 1001 }, (_, i) => ({ id: `s${i}`, name: `Step ${i}` })),
        },
        'steps',
      ],
    ];
    for (const [what, bad, where] of cases) {
      const res = await rawPost(bad);
      expect(res.status, `${what}: ${res.text}`).toBe(400);
      expect(violationPaths(res), what).toContain(where);
    }
    // Equal bounds in different units pass: 60 minutes ≤ 1 hour.
    const [first, ...others] = base;
    if (!first) throw new Error('no step');
    const equalBounds: Step = {
      ...first,
      durationRange: { min: { value: 60, unit: 'minutes' }, max: { value: 1, unit: 'hours' } },
    };
    await answered(post({ ...body, steps: [equalBounds, ...others] }), 201);
  });

  it('updates any subset; lists are replaced and the merged process is validated whole', async () => {
    const id = await createProcess(svc);
    const renamed = await updated(id, { name: 'Onboarding v2', description: null });
    expect(renamed).toMatchObject({ name: 'Onboarding v2', description: null, stepCount: 5 });
    expect(renamed.updatedAt >= renamed.createdAt).toBe(true);

    // Dropping steps the edges still name is refused as a whole, and nothing changes.
    expectError(await patch(id, { steps: [{ id: 's1', name: 'Only step' }] }), 400, 'customEdges');
    expect((await read(id)).stepCount).toBe(5);

    const replaced = await updated(id, {
      steps: [
        { id: 'a', name: 'A' },
        { id: 'b', name: 'B' },
      ],
      customEdges: [{ id: 'ab', sourceStepId: 'a', targetStepId: 'b' }],
    });
    expect(replaced).toMatchObject({
      stepCount: 2,
      branchCount: 0,
      processIntegrations: [{ id: 'int-erp', text: 'SAP' }],
    });

    // Untyped: bodies the contract refuses.
    expectError(await svc.request('PATCH', `/api/v1/discovery/process/${id}`, { body: {} }), 400, 'nothing to update');
    expectError(await svc.request('PATCH', `/api/v1/discovery/process/${id}`, { body: { steps: 'many' } }), 400);
  });

  it('keeps the hierarchy a tree: a parent of the same organization, never a cycle', async () => {
    const root = await createProcess(svc);
    const child = await createProcess(svc, processBody({ parentProcessId: root }));
    expect((await read(child)).parentProcessId).toBe(root);
    const grandchild = await createProcess(svc, processBody({ parentProcessId: child }));
    const cycle = await patch(root, { parentProcessId: grandchild });
    expectError(cycle, 400, 'own ancestor');
    expectError(await patch(root, { parentProcessId: root }), 400, 'own ancestor');
    expect((await updated(child, { parentProcessId: null })).parentProcessId).toBeNull();
  });

  it('has a number for branchOrder on every step: 0 on the main line unless given, accepted there on write', async () => {
    const body = processBody();
    const [s1, s2, ...rest] = body.steps;
    if (!s1 || !s2 || !rest[0]) throw new Error('no steps');
    // As discovery tools export it: a number on every step, main line included.
    const created = await answered(
      post({ ...body, steps: [{ ...s1, branchOrder: 0 }, { ...s2, branchOrder: 3 }, ...rest] }),
      201,
    );
    expect(created.steps.map((s) => [s.id, s.branchOrder])).toEqual([
      ['s1', 0],
      ['s2', 3],
      ['s3', 0],
      ['s4', 1],
      ['s5', 0],
    ]);
    const id = created.id;
    // Omitted on the main line it reads as 0, in the current state and in a snapshot.
    const patched = await updated(id, { steps: [s1, s2, ...rest] });
    const version = await snapshot(id);
    for (const res of [patched, await read(id), await read(id, version.processVersionId)]) {
      expect(res.steps.map((s) => s.branchOrder)).toEqual([0, 0, 0, 1, 0]);
    }
    // A document stored with null (as every main-line step was before) reads as 0 too.
    const repo = new DiscoveryRepo(svc.service.context.store.db);
    const stored = await repo.create({
      organizationId: svc.organizationId,
      workspaceId: svc.workspaceId,
      createdBy: svc.userId,
      content: processContentSchema.parse({ name: 'Old row', steps: [{ id: 'a', name: 'A', branchOrder: null }] }),
    });
    expect((await repo.find(stored.id))?.content.steps[0]?.branchOrder).toBeNull();
    expect((await read(stored.id)).steps[0]?.branchOrder).toBe(0);
    // The branch rules hold for steps with a branchId: an order is required there.
    const noOrder = await post({ ...body, steps: [s1, s2, { ...rest[0], branchOrder: null }, ...rest.slice(1)] });
    expect(violationPaths(noOrder)).toContain('steps.2.branchOrder');
  });

  it('reads snapshots back unchanged after the process changed', async () => {
    const id = await createProcess(svc);
    const before = await read(id);
    const first = await snapshot(id);
    expect(first).toMatchObject({ processId: id, versionNumber: 1 });
    const v1 = first.processVersionId;

    const changed = await updated(id, {
      name: 'Changed',
      steps: [{ id: 'only', name: 'Only step', integrations: [{ id: 'int-new', text: 'HubSpot' }] }],
      customEdges: [],
      milestone: null,
    });
    const second = await snapshot(id);
    expect(second.versionNumber).toBe(2);

    const atV1 = await read(id, v1);
    expect(atV1).toEqual({ ...before, processVersionId: v1, versionNumber: 1 });

    const atV2 = await read(id, second.processVersionId);
    expect(atV2).toMatchObject({
      name: 'Changed',
      stepCount: 1,
      versionNumber: 2,
      updatedAt: changed.updatedAt,
    });
    expect(atV2.processIntegrations).toEqual([
      { id: 'int-erp', text: 'SAP' },
      { id: 'int-new', text: 'HubSpot' },
    ]);

    // Changing the process again leaves both snapshots as they were.
    await updated(id, { name: 'Changed again' });
    expect(await read(id, v1)).toEqual(atV1);
    expect(await read(id, second.processVersionId)).toEqual(atV2);
    expect(await read(id)).toMatchObject({ name: 'Changed again', processVersionId: null });
  });

  it('numbers concurrent snapshots without gaps or repeats', async () => {
    const id = await createProcess(svc);
    const taken = await Promise.all(Array.from({ length: 6 }, () => snapshot(id)));
    expect(taken.map((r) => r.versionNumber).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('refuses a JSON body over the body limit with 413', async () => {
    const huge = processBody({ description: 'x'.repeat(3 * 1024 * 1024) });
    expectError(await post(huge), 413);
  });

  it('documents every operation and status in the OpenAPI document', async () => {
    const doc = (await svc.request('GET', '/openapi.json')).body as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    const statuses = (path: string, method: string) => Object.keys(doc.paths[path]?.[method]?.responses ?? {}).sort();
    expect(statuses('/api/v1/discovery/process', 'post')).toEqual(['201', '400', '401', '403', '404', '413']);
    expect(statuses('/api/v1/discovery/process/import', 'post')).toEqual([
      '201',
      '400',
      '401',
      '403',
      '404',
      '413',
      '415',
    ]);
    expect(statuses('/api/v1/discovery/process/{processId}', 'get')).toEqual(['200', '400', '401', '403', '404']);
    expect(statuses('/api/v1/discovery/process/{processId}', 'patch')).toEqual([
      '200',
      '400',
      '401',
      '403',
      '404',
      '409',
      '413',
    ]);
    expect(statuses('/api/v1/discovery/process/{processId}/version', 'post')).toEqual([
      '201',
      '400',
      '401',
      '403',
      '404',
    ]);
    const importOp = doc.paths['/api/v1/discovery/process/import']?.post as unknown as {
      requestBody: { content: Record<string, unknown> };
    };
    expect(Object.keys(importOp.requestBody.content)).toEqual(['application/xml']);
  });
});
