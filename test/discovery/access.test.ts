import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.js';
import { createProcess, expectError, processBody } from './support.js';
import { type Caller, newCaller, newKey, newWorkspace } from '../support/keys.js';

describe('discovered processes: who may read and author', () => {
  let svc: TestService;
  let processId: string;
  let versionId: string;
  let otherOrg: Caller;
  beforeAll(async () => {
    svc = await startTestService();
    processId = await createProcess(svc);
    const snap = await svc.request('POST', `/api/v1/discovery/process/${processId}/version`);
    expect(snap.status, snap.text).toBe(201);
    versionId = String(snap.body.processVersionId);
    otherOrg = await newCaller(svc, ['discovery:full', 'workflow:full']);
  });
  afterAll(async () => {
    await svc?.stop();
  });

  const get = (path: string, key?: string | null) => svc.request('GET', path, { key });

  it('answers 401 without a key or with a wrong one', async () => {
    expectError(await get(`/api/v1/discovery/process/${processId}`, null), 401);
    expectError(await get(`/api/v1/discovery/process/${processId}`, 'cf_nope'), 401);
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
    expectError(await get('/api/v1/discovery/process/not-a-uuid'), 400, 'processId');
    expectError(await get(`/api/v1/discovery/process/${processId}?processVersionId=v1`), 400, 'processVersionId');
    expectError(await svc.request('PATCH', '/api/v1/discovery/process/123', { body: { name: 'x' } }), 400, 'processId');
    expectError(await svc.request('POST', '/api/v1/discovery/process/123/version'), 400, 'processId');
  });

  it('answers 404 for an unknown process and for a version of another process', async () => {
    expectError(await get(`/api/v1/discovery/process/${randomUUID()}`), 404);
    expectError(await get(`/api/v1/discovery/process/${processId}?processVersionId=${randomUUID()}`), 404);
    const second = await createProcess(svc);
    expectError(await get(`/api/v1/discovery/process/${second}?processVersionId=${versionId}`), 404, 'has no version');
    expect((await get(`/api/v1/discovery/process/${processId}?processVersionId=${versionId}`)).status).toBe(200);
    expectError(await svc.request('PATCH', `/api/v1/discovery/process/${randomUUID()}`, { body: { name: 'x' } }), 404);
    expectError(await svc.request('POST', `/api/v1/discovery/process/${randomUUID()}/version`), 404);
  });

  it('refuses another organization’s key with 403 everywhere, snapshots included, and changes nothing', async () => {
    expectError(await get(`/api/v1/discovery/process/${processId}`, otherOrg.key), 403, 'another organization');
    expectError(await get(`/api/v1/discovery/process/${processId}?processVersionId=${versionId}`, otherOrg.key), 403);
    expectError(
      await svc.request('PATCH', `/api/v1/discovery/process/${processId}`, {
        key: otherOrg.key,
        body: { name: 'pwned' },
      }),
      403,
    );
    expectError(
      await svc.request('POST', `/api/v1/discovery/process/${processId}/version`, { key: otherOrg.key }),
      403,
    );
    // Its own workspace id does not help it reach ours, nor ours it.
    const intoOurs = await svc.request('POST', '/api/v1/discovery/process', {
      key: otherOrg.key,
      body: processBody(),
      headers: { 'x-workspace-id': svc.workspaceId },
    });
    expectError(intoOurs, 403, 'another organization');
    const read = await get(`/api/v1/discovery/process/${processId}`);
    expect(read.body.name).toBe('Customer onboarding');
  });

  it('keeps the organization and workspace of the key, whatever the body says', async () => {
    const theirs = await createProcess(
      svc,
      processBody({ organizationId: svc.organizationId, workspaceId: svc.workspaceId }),
      otherOrg,
    );
    const res = await get(`/api/v1/discovery/process/${theirs}`, otherOrg.key);
    expect(res.body).toMatchObject({ organizationId: otherOrg.organizationId, workspaceId: otherOrg.workspaceId });
    expectError(await get(`/api/v1/discovery/process/${theirs}`), 403);
  });

  it('refuses a parent in another organization exactly like an unknown one', async () => {
    const theirs = await createProcess(svc, processBody(), otherOrg);
    const unknown = randomUUID();
    const withParent = (parentProcessId: string) =>
      svc.request('POST', '/api/v1/discovery/process', {
        body: processBody({ parentProcessId }),
        headers: { 'x-workspace-id': svc.workspaceId },
      });
    const foreign = await withParent(theirs);
    const missing = await withParent(unknown);
    expectError(foreign, 400, 'this key can read');
    expectError(missing, 400, 'this key can read');
    expect(String(foreign.body.message).replace(theirs, '<id>')).toBe(
      String(missing.body.message).replace(unknown, '<id>'),
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
    expectError(await get(`/api/v1/discovery/process/${theirs}`, none.key), 403, 'Discovery: Read');
    const readable = await get(`/api/v1/discovery/process/${theirs}`, reader.key);
    expect(readable.status, readable.text).toBe(200);

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
    expectError(
      await svc.request('POST', `/api/v1/discovery/process/${theirs}/version`, { key: reader.key }),
      403,
      'Discovery: Full',
    );
  });

  it('holds a workspace-scoped key to its workspaces', async () => {
    const org = await newCaller(svc, ['discovery:full']);
    const inA = await createProcess(svc, processBody(), org);
    const b = await newWorkspace(svc, org.organizationId);
    const scopedToB = await newKey(svc, ['discovery:full'], { organizationId: org.organizationId, workspaceIds: [b] });
    expectError(await get(`/api/v1/discovery/process/${inA}`, scopedToB.key), 403, 'no access to the workspace');
    expectError(
      await svc.request('PATCH', `/api/v1/discovery/process/${inA}`, { key: scopedToB.key, body: { name: 'x' } }),
      403,
    );
    const inB = await createProcess(svc, processBody(), { ...org, key: scopedToB.key, workspaceId: b });
    expect((await get(`/api/v1/discovery/process/${inB}`, scopedToB.key)).status).toBe(200);
    // A parent in a workspace the key cannot reach is refused like an unknown one.
    const child = await svc.request('POST', '/api/v1/discovery/process', {
      key: scopedToB.key,
      body: processBody({ parentProcessId: inA }),
      headers: { 'x-workspace-id': b },
    });
    expectError(child, 400, 'this key can read');
  });

  it('checks the workspace header: 400 missing or malformed, 404 unknown', async () => {
    const post = (headers: Record<string, string>) =>
      svc.request('POST', '/api/v1/discovery/process', { body: processBody(), headers });
    expectError(await post({}), 400, 'x-workspace-id');
    expectError(await post({ 'x-workspace-id': 'ws-1' }), 400, 'x-workspace-id');
    expectError(await post({ 'x-workspace-id': randomUUID() }), 404);
  });
});
