import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DomainError } from '../errors.js';
import { hasGrant, requireWorkspaceGrant } from '../auth/access.js';
import type { AuthContext } from '../domain/auth-context.js';
import { ConfigError, publicUrl, type Config } from '../config/config.js';
import type { Logger } from '../logging/logger.js';
import type { AccessScope } from '../domain/file-access.js';
import type { FileRepo, LibraryFilter } from '../store/file-repo.js';
import type { FileRecord } from '../domain/file-records.js';
import type { CaseRepo } from '../store/case-repo.js';
import type { Repositories } from '../store/repositories.js';
import type { TenancyRepo } from '../store/tenancy-repo.js';
import type { WorkflowRepo } from '../store/workflow-repo.js';
import {
  ContentCheck,
  ContentMismatchError,
  contentTypeOf,
  extensionAllowed,
  isSupportedExtension,
  maxFileBytes,
  outputFileType,
  supportedExtensions,
} from './file-types.js';
import { S3FileStorage } from './s3-storage.js';
import { loadSigningSecret, UploadSigner } from './signing.js';
import { LocalFileStorage, sweepStaleTempFiles, type FileStorage } from './storage.js';

/** Why a case input cannot use a file URL; the case engine turns it into its 4xx. */
export interface FileProblem {
  code: 'invalid_url' | 'unknown_file' | 'forbidden' | 'not_uploaded' | 'type_not_allowed';
  message: string;
}

export interface PresignInput {
  fileExtension: string;
  accessScope?: AccessScope;
  originalName?: string;
  workspaceId?: string;
  workflowId?: string;
}

export interface PresignResult {
  fileId: string;
  presignedUrl: string;
  fileUrl: string;
  /** ISO 8601: when presignedUrl stops working. */
  expiresAt: string;
}

/** A file as a node reads it; the Buffer lives outside the V8 heap and is dropped with the node's run. */
export interface NodeFile {
  name: string;
  contentType: string;
  bytes: Buffer;
}

/** The case a node reads a file for: its tenancy decides which files it may read. */
export interface CaseFileScope {
  caseId: string;
  organizationId: string;
  workspaceId: string;
}

/** A node may not read a file: never retried, the node fails with this message. */
export class FileReadRefused extends Error {
  constructor(
    readonly code: FileProblem['code'] | 'limit',
    message: string,
  ) {
    super(message);
    this.name = 'FileReadRefused';
  }
}

export interface NodeOutputInput {
  organizationId: string;
  workspaceId: string;
  /** The case whose node wrote it: the file is erased with the case. */
  caseId?: string;
  name: string;
  contentType: string;
  bytes: Buffer;
}

export interface FileServiceDeps {
  repos: Pick<Repositories, 'files' | 'tenancy' | 'workflows' | 'cases'>;
  config: Config;
  storage: FileStorage;
  signer: UploadSigner;
  logger?: Logger;
}

/** The path of every file's permanent URL; the upload URL hangs below it. */
export const filePathPrefix = '/api/v1/file';
const fileUrlPattern = /\/api\/v1\/file\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

/** The storage backend the configuration names (CASEFLOW_FILE_STORAGE, CASEFLOW_S3_*). */
export function createFileStorage(config: Config): FileStorage {
  const root = path.join(config.dataDir, 'files');
  if (config.files.storage === 'local') return new LocalFileStorage(root);
  const { bucket, ...s3 } = config.files.s3;
  if (!bucket) throw new ConfigError(['files.s3.bucket (CASEFLOW_S3_BUCKET): required when files.storage is s3']);
  return new S3FileStorage({ bucket, ...s3 }, path.join(root, 'tmp'));
}

/** A FileService over the configured storage and the upload signing secret (read or created once, here). */
export function createFileService(deps: Omit<FileServiceDeps, 'storage' | 'signer'>): FileService {
  const signer = new UploadSigner(loadSigningSecret(deps.config.dataDir, deps.config.files.signingSecret));
  return new FileService({ ...deps, storage: createFileStorage(deps.config), signer });
}

class UploadAbortedError extends Error {}

/**
 * File inputs and outputs: presigned uploads, the bytes' checks, downloads,
 * the library, and what the case engine needs (input checks, reads for
 * nodes, node outputs). Depends on the store, configuration and storage
 * only: the API and the worker's activities share one instance.
 */
export class FileService {
  private readonly repo: FileRepo;
  private readonly tenancy: TenancyRepo;
  private readonly workflows: WorkflowRepo;
  private readonly cases: CaseRepo;

  constructor(private readonly deps: FileServiceDeps) {
    this.repo = deps.repos.files;
    this.tenancy = deps.repos.tenancy;
    this.workflows = deps.repos.workflows;
    this.cases = deps.repos.cases;
  }

  get storage(): FileStorage {
    return this.deps.storage;
  }

  /** The base of every URL handed out: the public URL (configured, or derived from the listen address at start). */
  baseUrl(): string {
    return publicUrl(this.deps.config);
  }

  fileUrl(fileId: string): string {
    return `${this.baseUrl()}${filePathPrefix}/${fileId}`;
  }

  /**
   * The file id of a canonical file URL: exactly the public URL, the file
   * path and the id as issued; any other origin, query, fragment or spelling
   * names no file, so one file has one URL to authorize.
   */
  fileIdOf(url: string): string | undefined {
    const id = fileUrlPattern.exec(url)?.[1];
    return id !== undefined && url === this.fileUrl(id) ? id : undefined;
  }

  /** Uploads need File: Full; checked before the request is validated (403 before 400). */
  authorizeUpload(auth: AuthContext): void {
    if (!hasGrant(auth, 'file:full')) throw DomainError.forbidden('This API key lacks File: Full');
  }

  /**
   * Records a pending file and signs its upload URL. Needs File: Full; where
   * a workspace owns the file (workspaceId, or the workflow's workspace) the
   * key must reach that workspace with File: Full.
   */
  async presign(auth: AuthContext, input: PresignInput): Promise<PresignResult> {
    this.authorizeUpload(auth);
    const extension = input.fileExtension.toLowerCase();
    if (!isSupportedExtension(extension)) {
      throw DomainError.invalidFields(
        [{ field: 'body.fileExtension', message: `unsupported extension ${input.fileExtension}` }],
        {
          errorCode: 'BAD_REQUEST',
          message: `fileExtension must be one of ${supportedExtensions.join(', ')}`,
        },
      );
    }
    if (input.accessScope === 'workspace' && !input.workspaceId && !input.workflowId) {
      throw DomainError.invalidFields(
        [{ field: 'body.workspaceId', message: 'required when accessScope is workspace and workflowId is absent' }],
        {
          errorCode: 'BAD_REQUEST',
          message: 'accessScope workspace needs workspaceId or workflowId',
        },
      );
    }
    let workspaceId = input.workspaceId;
    if (input.workflowId) {
      const workflow = await this.workflows.findWorkflow(input.workflowId);
      if (!workflow) throw DomainError.notFound(`Workflow ${input.workflowId} does not exist`);
      if (workflow.organizationId !== auth.organizationId)
        throw DomainError.forbidden('The workflow belongs to another organization');
      if (workspaceId && workspaceId !== workflow.workspaceId) {
        throw DomainError.invalidFields(
          [
            {
              field: 'body.workspaceId',
              message: `workflow ${workflow.id} belongs to workspace ${workflow.workspaceId}`,
            },
          ],
          {
            errorCode: 'BAD_REQUEST',
            message: 'workspaceId is not the workspace of workflowId',
          },
        );
      }
      workspaceId = workflow.workspaceId;
    }
    if (workspaceId) await requireWorkspaceGrant(this.tenancy, auth, workspaceId, 'file:full');

    const id = randomUUID();
    const now = new Date();
    const expiresAtSeconds = Math.floor(now.getTime() / 1000) + this.deps.config.files.uploadUrlTtlSeconds;
    const expiresAt = new Date(expiresAtSeconds * 1000).toISOString();
    await this.repo.create({
      id,
      organizationId: auth.organizationId,
      workspaceId: workspaceId ?? null,
      workflowId: input.workflowId ?? null,
      uploadedBy: auth.userId,
      // Unlisted files are readable like organization files but never listed.
      accessScope: input.accessScope ?? 'organization',
      listed: input.accessScope !== undefined,
      extension,
      originalName: input.originalName ?? null,
      contentType: contentTypeOf(extension),
      sizeBytes: null,
      status: 'pending',
      storageKey: `${auth.organizationId}/${id}${extension}`,
      source: 'upload',
      uploadExpiresAt: expiresAt,
      createdAt: now.toISOString(),
      uploadedAt: null,
    });
    const signature = this.deps.signer.sign(id, expiresAtSeconds);
    const query = new URLSearchParams({ expires: String(expiresAtSeconds), signature });
    return {
      fileId: id,
      presignedUrl: `${this.baseUrl()}${filePathPrefix}/upload/${id}?${query.toString()}`,
      fileUrl: this.fileUrl(id),
      expiresAt,
    };
  }

  /**
   * Receives the bytes sent to a presigned URL. The signature is the
   * authority (no API key). The bytes stream to a temporary file while their
   * size and type are checked, and are committed to storage only when every
   * check passed; any failure removes the temporary file and gives the URL
   * back, so nothing partial is ever visible. A URL works once.
   */
  async receiveUpload(
    fileId: string,
    expiresAtSeconds: number,
    signature: string,
    body: Readable,
    declaredLength?: number,
  ): Promise<FileRecord> {
    if (!this.deps.signer.verify(fileId, expiresAtSeconds, signature))
      throw DomainError.forbidden('Invalid upload signature');
    if (Date.now() >= expiresAtSeconds * 1000)
      throw DomainError.forbidden('The upload URL has expired; request a new one');
    const record = await this.repo.find(fileId);
    if (!record || record.source !== 'upload') throw DomainError.notFound(`File ${fileId} does not exist`);
    if (record.status === 'uploaded') throw DomainError.conflict('This upload URL has already been used');
    if (declaredLength !== undefined && declaredLength > maxFileBytes) throw tooLarge();
    if (!(await this.repo.claimForUpload(fileId)))
      throw DomainError.conflict('An upload to this URL is already in progress');

    const extension = record.extension;
    if (!isSupportedExtension(extension)) throw new Error(`File ${fileId} has unsupported extension ${extension}`);
    const tempFile = path.join(this.storage.tempDir, `${fileId}.${randomUUID()}.part`);
    let committed = false;
    try {
      await mkdir(this.storage.tempDir, { recursive: true });
      const check = new ContentCheck(extension);
      const size = await receiveInto(body, tempFile, check);
      await check.finish(tempFile);
      await this.storage.commit(tempFile, record.storageKey, { contentType: record.contentType, size });
      committed = true;
      await this.repo.markUploaded(fileId, size);
      return { ...record, status: 'uploaded', sizeBytes: size };
    } catch (err) {
      await rm(tempFile, { force: true });
      if (committed) await this.storage.remove(record.storageKey);
      await this.repo.releaseClaim(fileId);
      if (err instanceof ContentMismatchError) throw DomainError.badRequest(err.message, { fileExtension: extension });
      if (err instanceof UploadAbortedError)
        throw DomainError.badRequest('The upload was interrupted before all bytes arrived');
      throw err;
    }
  }

  /**
   * Cleans up after crashed uploads: records stuck in 'receiving' past their
   * URL's expiry go back to 'pending' and their temporary files are deleted,
   * as are temporary files older than a day. Run at start and periodically.
   */
  async cleanUpStuckUploads(): Promise<number> {
    const stuck = await this.repo.releaseStuckUploads(new Date().toISOString());
    if (stuck.length > 0) {
      const names = await readdir(this.storage.tempDir).catch(() => [] as string[]);
      const prefixes = stuck.map((id) => `${id}.`);
      await Promise.all(
        names
          .filter((n) => prefixes.some((p) => n.startsWith(p)))
          .map((n) => rm(path.join(this.storage.tempDir, n), { force: true })),
      );
      this.deps.logger?.warn({ fileIds: stuck }, 'released uploads left receiving by a crashed process');
    }
    await sweepStaleTempFiles(this.storage.tempDir);
    return stuck.length;
  }

  /** Whether the key's scope reaches the file (same organization assumed; grants are checked by callers). */
  static canRead(auth: Pick<AuthContext, 'userId' | 'scope'>, record: FileRecord): boolean {
    switch (record.accessScope) {
      case 'user':
        return record.uploadedBy === auth.userId;
      case 'workspace':
        return (
          record.workspaceId !== null &&
          (auth.scope.type === 'organization' || auth.scope.workspaceIds.includes(record.workspaceId))
        );
      case 'organization':
      case 'all':
        return true;
    }
  }

  /** A file the caller may download, with its bytes: 403 without File: Read or outside its scope, 404 unknown or not uploaded. */
  async openForDownload(
    auth: AuthContext,
    fileId: string,
  ): Promise<{ record: FileRecord; name: string; stream: Readable }> {
    if (!hasGrant(auth, 'file:read')) throw DomainError.forbidden('This API key lacks File: Read');
    const record = await this.repo.find(fileId);
    if (!record) throw DomainError.notFound(`File ${fileId} does not exist`);
    if (record.organizationId !== auth.organizationId)
      throw DomainError.forbidden('The file belongs to another organization');
    if (!FileService.canRead(auth, record))
      throw DomainError.forbidden(`The file's access scope (${record.accessScope}) does not include this API key`);
    if (record.status !== 'uploaded')
      throw DomainError.notFound(`File ${fileId} has no bytes yet: send them to its presigned URL first`);
    const stream = await this.storage.open(record.storageKey);
    if (!stream) {
      this.deps.logger?.error(
        { fileId, storageKey: record.storageKey },
        'file recorded as uploaded but missing from storage',
      );
      throw DomainError.notFound(`File ${fileId} has no bytes in storage`);
    }
    return { record, name: downloadName(record), stream };
  }

  /** The library: listed, uploaded files the caller may read; optionally one workspace's (plus `all` files). */
  async listLibrary(auth: AuthContext, filter: LibraryFilter): Promise<FileRecord[]> {
    if (!hasGrant(auth, 'file:read')) throw DomainError.forbidden('This API key lacks File: Read');
    if (filter.workspaceId) await requireWorkspaceGrant(this.tenancy, auth, filter.workspaceId, 'file:read');
    return this.repo.listLibrary(auth, filter);
  }

  /**
   * Whether a case may read the file: same organization, and within its
   * scope as seen from the case: a workspace file only in its own workspace,
   * a user's file only in a case that user created.
   */
  static caseMayRead(
    scope: { organizationId: string; workspaceId: string; userId: string | null },
    record: FileRecord,
  ): boolean {
    if (record.organizationId !== scope.organizationId) return false;
    switch (record.accessScope) {
      case 'user':
        return record.uploadedBy !== null && record.uploadedBy === scope.userId;
      case 'workspace':
        return record.workspaceId === scope.workspaceId;
      case 'organization':
      case 'all':
        return true;
    }
  }

  /**
   * For the case engine: null when `url` may be a file input of this caller
   * in this case, else why not. The URL must be canonical, the file hold its
   * bytes, be readable by the key (File: Read and the scope rules, as for a
   * download) and by the case (caseMayRead, the rule the worker applies
   * again at use), and, when `allowedTypes` (the `allowed_file_types` tag,
   * e.g. ["PDF"]) is non-empty, have one of those types.
   */
  async checkCaseFileInput(
    auth: AuthContext,
    url: string,
    allowedTypes: string[] | undefined,
    caseScope: { organizationId: string; workspaceId: string; userId: string | null },
  ): Promise<FileProblem | null> {
    const fileId = this.fileIdOf(url);
    if (!fileId)
      return {
        code: 'invalid_url',
        message: `${url} is not a file URL of this service (expected ${this.fileUrl('<fileId>')}, no query or fragment)`,
      };
    const record = await this.repo.find(fileId);
    if (!record) return { code: 'unknown_file', message: `File ${fileId} does not exist` };
    const keyMayRead =
      record.organizationId === auth.organizationId && hasGrant(auth, 'file:read') && FileService.canRead(auth, record);
    if (!keyMayRead || !FileService.caseMayRead(caseScope, record)) {
      return {
        code: 'forbidden',
        message: `File ${fileId} is not accessible to this API key in this case's workspace`,
      };
    }
    if (record.status !== 'uploaded')
      return { code: 'not_uploaded', message: `File ${fileId} has no bytes yet: send them to its presigned URL first` };
    if (allowedTypes && allowedTypes.length > 0 && !extensionAllowed(record.extension, allowedTypes)) {
      return {
        code: 'type_not_allowed',
        message: `File ${fileId} is ${record.extension}; allowed: ${allowedTypes.join(', ')}`,
      };
    }
    return null;
  }

  /**
   * For a node, at use time: the file's name, type and bytes, when the case
   * may read it, whatever way the URL came into the case (execute inputs,
   * fixed values, defaults, added variables, upstream outputs). Each read
   * counts against the case's limits (files.maxReadsPerCase,
   * files.maxReadBytesPerCase) before any byte is read. Throws
   * FileReadRefused; a refused file's bytes are never read.
   */
  async readForNode(url: string, scope: CaseFileScope): Promise<NodeFile> {
    const fileId = this.fileIdOf(url);
    if (!fileId)
      throw new FileReadRefused('invalid_url', `File not accessible: ${url} is not a file URL of this service`);
    const record = await this.repo.find(fileId);
    const userId =
      record?.accessScope === 'user' ? ((await this.cases.find(scope.caseId))?.createdByUserId ?? null) : null;
    // Another tenant's file and a missing one read the same: nothing about other tenants' files leaks.
    if (!record || !FileService.caseMayRead({ ...scope, userId }, record)) {
      throw new FileReadRefused('forbidden', `File not accessible: ${url} is not readable by this case`);
    }
    if (record.status !== 'uploaded' || record.sizeBytes === null)
      throw new FileReadRefused('not_uploaded', `File not accessible: ${url} has no bytes yet`);
    const { maxReadsPerCase, maxReadBytesPerCase } = this.deps.config.files;
    if (
      !(await this.repo.reserveCaseRead(scope.caseId, record.sizeBytes, {
        maxFiles: maxReadsPerCase,
        maxBytes: maxReadBytesPerCase,
      }))
    ) {
      throw new FileReadRefused(
        'limit',
        `File limit of this case reached: at most ${maxReadsPerCase} file reads and ${maxReadBytesPerCase} bytes per case (files.maxReadsPerCase, files.maxReadBytesPerCase)`,
      );
    }
    const stream = await this.storage.open(record.storageKey);
    if (!stream) throw new FileReadRefused('not_uploaded', `File not accessible: ${url} has no bytes in storage`);
    return {
      name: downloadName(record),
      contentType: record.contentType,
      bytes: await readAtMost(stream, record.sizeBytes),
    };
  }

  /**
   * For a generation run, at use time: the first `maxBytes` of a file the
   * run's user may read in its workspace (the case rule, caseMayRead, with
   * the run's user). Throws FileReadRefused; a refused file is never read.
   */
  async readForGeneration(
    url: string,
    scope: { organizationId: string; workspaceId: string; userId: string },
    maxBytes: number,
  ): Promise<NodeFile> {
    const fileId = this.fileIdOf(url);
    if (!fileId) throw new FileReadRefused('invalid_url', `${url} is not a file URL of this service`);
    const record = await this.repo.find(fileId);
    if (!record || !FileService.caseMayRead(scope, record))
      throw new FileReadRefused('forbidden', `${url} is not readable by this run`);
    if (record.status !== 'uploaded' || record.sizeBytes === null)
      throw new FileReadRefused('not_uploaded', `${url} has no bytes yet`);
    const stream = await this.storage.open(record.storageKey);
    if (!stream) throw new FileReadRefused('not_uploaded', `${url} has no bytes in storage`);
    return { name: downloadName(record), contentType: record.contentType, bytes: await readPrefix(stream, maxBytes) };
  }

  /** Removes erased files' bytes (their records are gone already); a missing object is no error. */
  async removeBytes(storageKeys: string[]): Promise<void> {
    for (const key of storageKeys) await this.storage.remove(key);
  }

  /**
   * Stores a file a node produced and returns its permanent URL. It belongs
   * to the case's workspace (scope `workspace`, unlisted). Same 10 MB limit
   * as uploads; its type is one of the contract's (by the name's extension)
   * or application/octet-stream (outputFileType), so nothing else is ever served.
   */
  async storeNodeOutput(input: NodeOutputInput): Promise<string> {
    if (input.bytes.length > maxFileBytes)
      throw new Error(`Output file ${input.name} is ${input.bytes.length} bytes; the limit is ${maxFileBytes}`);
    const name = input.name.trim() || 'output';
    const { extension, contentType } = outputFileType(name, input.contentType);
    const id = randomUUID();
    const storageKey = `${input.organizationId}/${id}${extension}`;
    // Bytes first, then the record: a record never points at nothing.
    await this.storage.putBytes(storageKey, input.bytes, contentType);
    const now = new Date().toISOString();
    await this.repo.create({
      id,
      organizationId: input.organizationId,
      workspaceId: input.workspaceId,
      workflowId: null,
      uploadedBy: null,
      accessScope: 'workspace',
      listed: false,
      extension,
      originalName: name,
      contentType,
      sizeBytes: input.bytes.length,
      status: 'uploaded',
      storageKey,
      source: 'node_output',
      uploadExpiresAt: null,
      createdAt: now,
      uploadedAt: now,
      ...(input.caseId ? { caseId: input.caseId } : {}),
    });
    return this.fileUrl(id);
  }
}

function tooLarge(): DomainError {
  return DomainError.tooLarge(`A file may be at most ${maxFileBytes} bytes (10 MB)`);
}

function downloadName(record: FileRecord): string {
  return record.originalName ?? `${record.id}${record.extension}`;
}

/**
 * Streams the request body into tempFile, counting and checking as it goes.
 * Not stream.pipeline(body, ...): on a rejection that would destroy the
 * request and with it the socket the 413 or 400 has to go back on.
 */
/** The stream's bytes in one Buffer, refusing more than the recorded size (what was counted against the limits). */
/** The first `max` bytes of a stream; the rest is never read. */
async function readPrefix(stream: Readable, max: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  let length = 0;
  try {
    for await (const chunk of stream) {
      const part = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
      parts.push(part.subarray(0, max - length));
      length += Math.min(part.length, max - length);
      if (length >= max) break;
    }
  } finally {
    stream.destroy();
  }
  return Buffer.concat(parts);
}

async function readAtMost(stream: Readable, size: number): Promise<Buffer> {
  const bytes = Buffer.allocUnsafe(size);
  let filled = 0;
  try {
    for await (const chunk of stream) {
      const part = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
      if (filled + part.length > size) throw new Error('stored bytes exceed the recorded size');
      part.copy(bytes, filled);
      filled += part.length;
    }
  } finally {
    stream.destroy();
  }
  if (filled !== size) throw new Error(`stored bytes (${filled}) differ from the recorded size (${size})`);
  return bytes;
}

async function receiveInto(body: Readable, tempFile: string, check: ContentCheck): Promise<number> {
  let size = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      if (size > maxFileBytes) {
        done(tooLarge());
        return;
      }
      try {
        check.update(chunk);
        done(null, chunk);
      } catch (err) {
        done(err as Error);
      }
    },
  });
  const file = createWriteStream(tempFile, { flags: 'wx', mode: 0o600 });
  // The file is opened asynchronously: a refusal can come before the open has created it. Waiting
  // for the close lets the caller's cleanup run after the file exists, so no `.part` is left behind.
  const closed = new Promise<void>((resolve) => file.once('close', () => resolve()));
  const written = pipeline(meter, file);
  const onClose = () => {
    if (!body.readableEnded) meter.destroy(new UploadAbortedError('aborted'));
  };
  const onError = () => meter.destroy(new UploadAbortedError('aborted'));
  body.once('close', onClose);
  body.once('error', onError);
  body.pipe(meter);
  try {
    await written;
  } finally {
    body.unpipe(meter);
    body.off('close', onClose);
    body.off('error', onError);
    await closed;
  }
  return size;
}
