import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuthContext } from '../../src/domain/auth-context.js';
import type { FileService } from '../../src/files/file-service.js';
import { answered, startTestService, type TestService } from '../support/harness.js';
import { download, presign, samples, upload } from './support.js';
import { newCaller, newKey, newWorkspace } from '../support/keys.js';

/** What the case engine and activities call, against the running service's store and storage. */
describe('FileService for the case engine', () => {
  let svc: TestService;
  let files: FileService;
  let owner: AuthContext;
  let colleague: AuthContext;
  /** A case of the default workspace created by the bootstrap user. */
  let inCase: { organizationId: string; workspaceId: string; userId: string };
  let caseScope: { caseId: string; organizationId: string; workspaceId: string };

  const auth = (userId: string, overrides: Partial<AuthContext> = {}): AuthContext => ({
    keyId: 'test',
    userId,
    organizationId: svc.organizationId,
    organizationVerified: true,
    scope: { type: 'organization' },
    grants: new Set(['file:full', 'case:full']),
    ...overrides,
  });

  beforeAll(async () => {
    svc = await startTestService();
    // The instance the worker's activities share with the API.
    files = svc.service.context.services.files;
    owner = auth(svc.userId);
    inCase = { organizationId: svc.organizationId, workspaceId: svc.workspaceId, userId: svc.userId };
    caseScope = { caseId: crypto.randomUUID(), organizationId: svc.organizationId, workspaceId: svc.workspaceId };
    colleague = auth((await newKey(svc, ['file:read'])).userId);
  });
  afterAll(async () => {
    await svc.stop();
  });

  it('checkCaseFileInput accepts uploaded, readable files of an allowed type only', async () => {
    const pdf = await presign(svc, { fileExtension: '.pdf', accessScope: 'user' });
    expect(await files.checkCaseFileInput(owner, pdf.fileUrl, undefined, inCase)).toMatchObject({
      code: 'not_uploaded',
    });
    expect((await upload(pdf.presignedUrl, samples['.pdf'] as Buffer)).status).toBe(200);

    expect(await files.checkCaseFileInput(owner, pdf.fileUrl, undefined, inCase)).toBeNull();
    expect(await files.checkCaseFileInput(owner, pdf.fileUrl, ['PDF', 'PNG'], inCase)).toBeNull();
    expect(await files.checkCaseFileInput(owner, pdf.fileUrl, [], inCase)).toBeNull();
    expect(await files.checkCaseFileInput(owner, pdf.fileUrl, ['PNG'], inCase)).toMatchObject({
      code: 'type_not_allowed',
    });
    expect(await files.checkCaseFileInput(colleague, pdf.fileUrl, undefined, inCase)).toMatchObject({
      code: 'forbidden',
    });
    expect(
      await files.checkCaseFileInput(
        auth(svc.userId, { grants: new Set(['case:full']) }),
        pdf.fileUrl,
        undefined,
        inCase,
      ),
    ).toMatchObject({ code: 'forbidden' });
    expect(
      await files.checkCaseFileInput(
        auth(svc.userId, { organizationId: crypto.randomUUID() }),
        pdf.fileUrl,
        undefined,
        inCase,
      ),
    ).toMatchObject({
      code: 'forbidden',
    });
    expect(await files.checkCaseFileInput(owner, 'https://example.com/file.pdf', undefined, inCase)).toMatchObject({
      code: 'invalid_url',
    });
    expect(await files.checkCaseFileInput(owner, 'not a url', undefined, inCase)).toMatchObject({
      code: 'invalid_url',
    });
    expect(
      await files.checkCaseFileInput(owner, `${svc.url}/api/v1/file/${crypto.randomUUID()}`, undefined, inCase),
    ).toMatchObject({ code: 'unknown_file' });

    const jpg = await presign(svc, { fileExtension: '.jpg' });
    expect((await upload(jpg.presignedUrl, samples['.jpg'] as Buffer)).status).toBe(200);
    expect(await files.checkCaseFileInput(owner, jpg.fileUrl, ['JPEG'], inCase)).toBeNull();
    expect(await files.checkCaseFileInput(colleague, jpg.fileUrl, ['JPG'], inCase)).toBeNull();
  });

  it('readForNode gives name, content type and bytes; refuses unknown, pending and non-canonical URLs', async () => {
    const p = await presign(svc, { fileExtension: '.csv', originalName: 'rows.csv' });
    expect((await upload(p.presignedUrl, samples['.csv'] as Buffer)).status).toBe(200);
    const file = await files.readForNode(p.fileUrl, caseScope);
    expect(file).toEqual({ name: 'rows.csv', contentType: 'text/csv; charset=utf-8', bytes: samples['.csv'] });
    await expect(files.readForNode(`${svc.url}/api/v1/file/${crypto.randomUUID()}`, caseScope)).rejects.toThrow(
      /not accessible/,
    );
    const pending = await presign(svc, { fileExtension: '.csv' });
    await expect(files.readForNode(pending.fileUrl, caseScope)).rejects.toThrow(/no bytes/);
    await expect(files.readForNode(`${p.fileUrl}?x=1`, caseScope)).rejects.toThrow(/not a file URL of this service/);
    await expect(files.readForNode(p.fileUrl.replace('127.0.0.1', 'localhost'), caseScope)).rejects.toThrow(
      /not a file URL of this service/,
    );
  });

  it('readForNode refuses files outside the case: another organization, another workspace, another user', async () => {
    const orgB = await newCaller(svc, ['file:full'], { verified: false });
    const theirs = { caseId: crypto.randomUUID(), organizationId: orgB.organizationId, workspaceId: orgB.workspaceId };
    const p = await presign(svc, { fileExtension: '.csv', accessScope: 'all' });
    expect((await upload(p.presignedUrl, samples['.csv'] as Buffer)).status).toBe(200);
    await expect(files.readForNode(p.fileUrl, theirs)).rejects.toThrow(/not accessible/);

    const otherWs = await newWorkspace(svc);
    const wsFile = await presign(svc, {
      fileExtension: '.csv',
      accessScope: 'workspace',
      workspaceId: svc.workspaceId,
    });
    expect((await upload(wsFile.presignedUrl, samples['.csv'] as Buffer)).status).toBe(200);
    await expect(files.readForNode(wsFile.fileUrl, { ...caseScope, workspaceId: otherWs })).rejects.toThrow(
      /not accessible/,
    );
    expect((await files.readForNode(wsFile.fileUrl, caseScope)).bytes.equals(samples['.csv'] as Buffer)).toBe(true);

    // A user-scoped file: only a case its uploader created (this case id has no record, so no creator).
    const mine = await presign(svc, { fileExtension: '.csv', accessScope: 'user' });
    expect((await upload(mine.presignedUrl, samples['.csv'] as Buffer)).status).toBe(200);
    await expect(files.readForNode(mine.fileUrl, caseScope)).rejects.toThrow(/not accessible/);
  });

  it("storeNodeOutput stores a file in the case's workspace, downloadable there, unlisted", async () => {
    const bytes = Buffer.from('%PDF-1.4 generated by a node');
    const url = await files.storeNodeOutput({
      organizationId: svc.organizationId,
      workspaceId: svc.workspaceId,
      name: 'out.pdf',
      contentType: 'application/pdf',
      bytes,
    });
    const fileUrl = svc.url + new URL(url).pathname;
    const got = await download(svc, fileUrl);
    expect(got.status).toBe(200);
    expect(got.bytes.equals(bytes)).toBe(true);
    expect(got.headers.get('content-type')).toBe('application/pdf');
    expect(got.headers.get('content-disposition')).toContain('filename="out.pdf"');

    const outsider = await newKey(svc, ['file:read'], { workspaceIds: [await newWorkspace(svc)] });
    expect((await download(svc, fileUrl, outsider.key)).status).toBe(403);
    const library = await answered(svc.client.GET('/api/v1/file'), 200);
    expect(library.files.map((f) => f.fileUrl)).not.toContain(fileUrl);
    expect(await files.readForNode(url, caseScope)).toMatchObject({ name: 'out.pdf', bytes });

    await expect(
      files.storeNodeOutput({
        organizationId: svc.organizationId,
        workspaceId: svc.workspaceId,
        name: 'big.bin',
        contentType: '',
        bytes: Buffer.alloc(10 * 1024 * 1024 + 1),
      }),
    ).rejects.toThrow(/limit/);
  });
});
