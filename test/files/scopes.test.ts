import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type paths } from '../../src/client/index.js';
import { answered, startTestService, type TestService } from '../support/harness.js';
import { download, presign, presignCall, samples, upload, type PresignBody } from './support.js';
import { newCaller, newKey, newWorkspace } from '../support/keys.js';

type LibraryQuery = NonNullable<paths['/api/v1/file']['get']['parameters']['query']>;

describe('file access scopes, permissions and the library', () => {
  let svc: TestService;
  let workspace2: string;
  let otherOrgWorkspace: string;
  let keys: Record<'ws1' | 'ws2' | 'colleague' | 'readOnly' | 'noFileGrant' | 'otherOrg', string>;
  let files: Record<
    'user' | 'workspace' | 'organization' | 'all' | 'unlisted' | 'ws2',
    { fileUrl: string; fileId: string }
  >;

  const uploaded = async (body: PresignBody, key?: string) => {
    const p = await presign(svc, body, key);
    const res = await upload(p.presignedUrl, samples['.pdf'] as Buffer);
    if (res.status !== 200) throw new Error(`upload ${res.status} ${res.text}`);
    return p;
  };

  beforeAll(async () => {
    svc = await startTestService();
    workspace2 = await newWorkspace(svc);
    const otherOrg = await newCaller(svc, ['file:full'], { verified: false });
    otherOrgWorkspace = otherOrg.workspaceId;
    keys = {
      ws1: (await newKey(svc, ['file:full'], { workspaceIds: [svc.workspaceId] })).key,
      ws2: (await newKey(svc, ['file:full'], { workspaceIds: [workspace2] })).key,
      colleague: (await newKey(svc, ['file:full'])).key,
      readOnly: (await newKey(svc, ['file:read'])).key,
      noFileGrant: (await newKey(svc, ['case:full', 'workflow:full'])).key,
      otherOrg: otherOrg.key,
    };
    files = {
      user: await uploaded({ fileExtension: '.pdf', accessScope: 'user', originalName: 'mine.pdf' }),
      workspace: await uploaded({ fileExtension: '.pdf', accessScope: 'workspace', workspaceId: svc.workspaceId }),
      organization: await uploaded({ fileExtension: '.pdf', accessScope: 'organization' }),
      all: await uploaded({ fileExtension: '.pdf', accessScope: 'all' }),
      unlisted: await uploaded({ fileExtension: '.pdf' }),
      ws2: await uploaded({ fileExtension: '.pdf', accessScope: 'workspace', workspaceId: workspace2 }, keys.ws2),
    };
  });
  afterAll(async () => {
    await svc.stop();
  });

  const status = async (file: keyof typeof files, key: string) =>
    (await download(svc, files[file].fileUrl, key)).status;

  it('user scope: only the uploader', async () => {
    expect(await status('user', svc.key)).toBe(200);
    expect(await status('user', keys.colleague)).toBe(403);
    expect(await status('user', keys.ws1)).toBe(403);
  });

  it('workspace scope: keys reaching that workspace', async () => {
    expect(await status('workspace', keys.ws1)).toBe(200);
    expect(await status('workspace', keys.colleague)).toBe(200);
    expect(await status('workspace', keys.ws2)).toBe(403);
    expect(await status('ws2', keys.ws2)).toBe(200);
    expect(await status('ws2', keys.ws1)).toBe(403);
  });

  it('organization, all and unlisted: every key of the organization, never another organization', async () => {
    for (const file of ['organization', 'all', 'unlisted'] as const) {
      expect(await status(file, keys.ws2), file).toBe(200);
      expect(await status(file, keys.readOnly), file).toBe(200);
      expect(await status(file, keys.otherOrg), file).toBe(403);
    }
    expect(await status('workspace', keys.otherOrg)).toBe(403);
  });

  it('download needs File: Read; presign needs File: Full', async () => {
    expect(await status('organization', keys.noFileGrant)).toBe(403);
    const readOnly = await presignCall(svc, { fileExtension: '.pdf' }, keys.readOnly);
    expect(readOnly.response.status).toBe(403);
    // Permission before validation: a bad body from a key without File: Full is still 403.
    const badBody = await svc.request('POST', '/api/v1/file/upload/presigned', {
      body: { fileExtension: '.exe' },
      key: keys.noFileGrant,
    });
    expect(badBody.status).toBe(403);
  });

  it('workspace scope needs workspaceId or workflowId, and the key must reach that workspace', async () => {
    const missing = await presignCall(svc, { fileExtension: '.pdf', accessScope: 'workspace' });
    expect(missing.response.status).toBe(400);
    expect(missing.error?.metadata).toMatchObject({ fields: [{ field: 'body.workspaceId' }] });
    const job = await presignCall(
      svc,
      { fileExtension: '.pdf', accessScope: 'workspace' },
      undefined,
      '/job/file/upload',
    );
    expect(job.response.status).toBe(400);
    const foreign = await presignCall(
      svc,
      { fileExtension: '.pdf', accessScope: 'workspace', workspaceId: workspace2 },
      keys.ws1,
    );
    expect(foreign.response.status).toBe(403);
    const otherOrg = await presignCall(svc, {
      fileExtension: '.pdf',
      accessScope: 'workspace',
      workspaceId: otherOrgWorkspace,
    });
    expect(otherOrg.response.status).toBe(403);
    const unknown = await presignCall(svc, {
      fileExtension: '.pdf',
      accessScope: 'workspace',
      workspaceId: crypto.randomUUID(),
    });
    expect(unknown.response.status).toBe(404);
  });

  it("workflowId: the workflow's workspace owns the file", async () => {
    const { workflowId } = await answered(
      svc.client.POST('/api/v1/workflow', {
        params: { header: { 'x-workspace-id': workspace2 } },
        body: { name: 'Owner' },
      }),
      201,
    );
    const p = await uploaded({ fileExtension: '.pdf', accessScope: 'workspace', workflowId });
    expect((await download(svc, p.fileUrl, keys.ws2)).status).toBe(200);
    expect((await download(svc, p.fileUrl, keys.ws1)).status).toBe(403);
    const mismatch = await presignCall(svc, {
      fileExtension: '.pdf',
      accessScope: 'workspace',
      workflowId,
      workspaceId: svc.workspaceId,
    });
    expect(mismatch.response.status).toBe(400);
    const outsider = await presignCall(svc, { fileExtension: '.pdf', accessScope: 'workspace', workflowId }, keys.ws1);
    expect(outsider.response.status).toBe(403);
    const foreignWorkflow = await presignCall(svc, { fileExtension: '.pdf', workflowId }, keys.otherOrg);
    expect(foreignWorkflow.response.status).toBe(403);
    const unknown = await presignCall(svc, { fileExtension: '.pdf', workflowId: crypto.randomUUID() });
    expect(unknown.response.status).toBe(404);
  });

  it('the library lists listed files the key may read; unlisted files never', async () => {
    const library = (key: string, query: LibraryQuery = {}) =>
      createClient({ baseUrl: svc.url, key }).GET('/api/v1/file', { params: { query } });
    const list = async (key: string, query: LibraryQuery = {}) =>
      (await answered(library(key, query), 200)).files.map((f) => f.fileId);
    const ids = Object.fromEntries(Object.entries(files).map(([k, v]) => [k, v.fileId]));
    const mine = await list(svc.key);
    expect(mine).toEqual(expect.arrayContaining([ids.user, ids.workspace, ids.organization, ids.all, ids.ws2]));
    expect(mine).not.toContain(ids.unlisted);

    const colleague = await list(keys.colleague);
    expect(colleague).not.toContain(ids.user);
    expect(colleague).toContain(ids.workspace);

    const ws2 = await list(keys.ws2);
    expect(ws2).toEqual(expect.arrayContaining([ids.organization, ids.all, ids.ws2]));
    expect(ws2).not.toContain(ids.workspace);
    expect(ws2).not.toContain(ids.unlisted);

    expect(await list(keys.otherOrg)).toEqual([]);

    const inWorkspace2 = await list(svc.key, { workspaceId: workspace2 });
    expect(inWorkspace2).toEqual(expect.arrayContaining([ids.ws2, ids.all]));
    expect(inWorkspace2).not.toContain(ids.organization);
    expect(inWorkspace2).not.toContain(ids.workspace);

    expect(await list(svc.key, { accessScope: 'all' })).toEqual([ids.all]);
    expect((await list(svc.key, { fileExtension: '.png' })).length).toBe(0);
    expect((await list(svc.key, { limit: 1 })).length).toBe(1);

    expect((await library(keys.ws1, { workspaceId: workspace2 })).response.status).toBe(403);
    expect((await library(keys.noFileGrant)).response.status).toBe(403);
    // Untyped: a limit the contract refuses.
    expect((await svc.request('GET', '/api/v1/file?limit=0')).status).toBe(400);
  });
});
