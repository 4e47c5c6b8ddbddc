import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answered, startTestService, type TestService } from '../support/harness.js';
import {
  createProcess,
  expectError,
  patchProcess,
  postProcess,
  processBody,
  readProcess,
  snapshotProcess,
} from './support.js';
import { type Caller, newCaller, newKey, newWorkspace } from '../support/keys.js';

describe('discovered processes: who may read and author', () => {
  let svc: TestService;
  let processId: string;
  let versionId: string;
  let otherOrg: Caller;
  beforeAll(async () => {
    svc = await startTestService();
    processId = await createProcess(svc);
    versionId = (await answered(snapshotProcess(svc, processId), 201)).processVersionId;
    otherOrg = await newCaller(svc, ['discovery:full', 'workflow:full']);
  });
  afterAll(async () => {
    await svc?.stop();
  });

  const read = (id: string, options: { versionId?: string; key?: string } = {}) =>
    readProcess(svc, id, options.versionId, options.key);

  it('answers 401 without a key or with a wrong one', async () => {
    // Untyped: no key at all.
    expectError(await svc.request('GET', `/api/v1/discovery/process/${processId}`, { key: null }), 401);
    expectError(await read(processId, { key: 'cf_nope' }), 401);
    expectError(
      await svc.request('POST', '/api/v1/discovery/process', {
        key: null,
        body: processBody(),
        headers: { 'x-workspace-id': svc.workspaceId },
      }),
      401,
    );
  });

  it('answers 400 for a processId or processVersionId that is not a UUID', async () => {
    expectError(await read('not-a-uuid'), 400, 'processId');
    expectError(await read(processId, { versionId: 'v1' }), 400, 'processVersionId');
    expectError(await patchProcess(svc, '123', { name: 'x' }), 400, 'processId');
    expectError(await snapshotProcess(svc, '123'), 400, 'processId');
  });

  it('answers 404 for an unknown process and for a version of another process', async () => {
    expectError(await read(randomUUID()), 404);
    expectError(await read(processId, { versionId: randomUUID() }), 404);
    const second = await createProcess(svc);
    expectError(await read(second, { versionId }), 404, 'has no version');
    await answered(read(processId, { versionId }), 200);
    expectError(await patchProcess(svc, randomUUID(), { name: 'x' }), 404);
    expectError(await snapshotProcess(svc, randomUUID()), 404);
  });

  it('refuses another organization’s key with 403 everywhere, snapshots included, and changes nothing', async () => {
    expectError(await read(processId, { key: otherOrg.key }), 403, 'another organization');
    expectError(await read(processId, { versionId, key: otherOrg.key }), 403);
    expectError(await patchProcess(svc, processId, { name: 'pwned' }, otherOrg.key), 403);
    expectError(await snapshotProcess(svc, processId, otherOrg.key), 403);
    // Its own workspace id does not help it reach ours, nor ours it.
    const intoOurs = await postProcess(svc, processBody(), { key: otherOrg.key, workspaceId: svc.workspaceId });
    expectError(intoOurs, 403, 'another organization');
    expect((await answered(read(processId), 200)).name).toBe('Customer onboarding');
  });

  it('keeps the organization and workspace of the key, whatever the body says', async () => {
    // Untyped: fields the contract does not name.
    const created = await svc.request('POST', '/api/v1/discovery/process', {
      key: otherOrg.key,
      body: { ...processBody(), organizationId: svc.organizationId, workspaceId: svc.workspaceId },
      headers: { 'x-workspace-id': otherOrg.workspaceId },
    });
    expect(created.status, created.text).toBe(201);
    const theirs = String(created.body.id);
    const res = await answered(read(theirs, { key: otherOrg.key }), 200);
    expect(res).toMatchObject({ organizationId: otherOrg.organizationId, workspaceId: otherOrg.workspaceId });
    expectError(await read(theirs), 403);
  });

  it('refuses a parent in another organization exactly like an unknown one', async () => {
    const theirs = await createProcess(svc, processBody(), otherOrg);
    const unknown = randomUUID();
    const withParent = (parentProcessId: string) => postProcess(svc, processBody({ parentProcessId }));
    const foreign = await withParent(theirs);
    const missing = await withParent(unknown);
    expectError(foreign, 400, 'this key can read');
    expectError(missing, 400, 'this key can read');
    expect(String(foreign.error?.message).replace(theirs, '<id>')).toBe(
      String(missing.error?.message).replace(unknown, '<id>'),
    );
  });

  it('needs Discovery: Read to read and Discovery: Full to author, checked before the body', async () => {
    const reader = await newCaller(svc, ['discovery:read']);
    const author = await newKey(svc, ['discovery:full'], { organizationId: reader.organizationId });
    // Same organization, every other grant.
    const none = await newKey(svc, ['workflow:full', 'case:full', 'code:full', 'integration:full', 'file:full'], {
      organizationId: reader.organizationId,
    });
    const theirs = await createProcess(svc, processBody(), { ...reader, key: author.key });
    expectError(await read(theirs, { key: none.key }), 403, 'Discovery: Read');
    await answered(read(theirs, { key: reader.key }), 200);

    // Untyped: a body the contract refuses, to show the grant is checked first.
    const badBody = { name: '', steps: 'no' };
    expectError(
      await svc.request('POST', '/api/v1/discovery/process', {
        key: reader.key,
        body: badBody,
        headers: { 'x-workspace-id': reader.workspaceId },
      }),
      403,
      'Discovery: Full',
    );
    expectError(
      await svc.request('PATCH', `/api/v1/discovery/process/${theirs}`, { key: reader.key, body: badBody }),
      403,
      'Discovery: Full',
    );
    expectError(await snapshotProcess(svc, theirs, reader.key), 403, 'Discovery: Full');
  });

  it('holds a workspace-scoped key to its workspaces', async () => {
    const org = await newCaller(svc, ['discovery:full']);
    const inA = await createProcess(svc, processBody(), org);
    const b = await newWorkspace(svc, org.organizationId);
    const scopedToB = await newKey(svc, ['discovery:full'], { organizationId: org.organizationId, workspaceIds: [b] });
    expectError(await read(inA, { key: scopedToB.key }), 403, 'no access to the workspace');
    expectError(await patchProcess(svc, inA, { name: 'x' }, scopedToB.key), 403);
    const inB = await createProcess(svc, processBody(), { ...org, key: scopedToB.key, workspaceId: b });
    await answered(read(inB, { key: scopedToB.key }), 200);
    // A parent in a workspace the key cannot reach is refused like an unknown one.
    const child = await postProcess(svc, processBody({ parentProcessId: inA }), { key: scopedToB.key, workspaceId: b });
    expectError(child, 400, 'this key can read');
  });

  it('checks the workspace header: 400 missing or malformed, 404 unknown', async () => {
    // Untyped: a missing header the contract requires.
    const post = (headers: Record<string, string>) =>
      svc.request('POST', '/api/v1/discovery/process', { body: processBody(), headers });
    expectError(await post({}), 400, 'x-workspace-id');
    expectError(await post({ 'x-workspace-id': 'ws-1' }), 400, 'x-workspace-id');
    expectError(await postProcess(svc, processBody(), { key: svc.key, workspaceId: randomUUID() }), 404);
  });
});
