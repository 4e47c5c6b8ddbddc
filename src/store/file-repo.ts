import { sql, type Selectable } from 'kysely';
import type { KeyScope } from '../domain/auth-context.js';
import type { Db } from './database.js';
import type { FileTable } from './tables/files.js';
import type { AccessScope } from '../domain/file-access.js';
import type { FileRecord, FileSource, FileStatus } from '../domain/file-records.js';

/** Who is looking at the library: the parts of a key that decide what it may read. */
export interface LibraryViewer {
  organizationId: string;
  userId: string;
  scope: KeyScope;
}

export interface LibraryFilter {
  /** Only files owned by this workspace, plus the organization's `all` files. */
  workspaceId?: string;
  accessScope?: AccessScope;
  extension?: string;
  limit: number;
  offset: number;
}

function toRecord(r: Selectable<FileTable>): FileRecord {
  return {
    id: r.id,
    organizationId: r.organization_id,
    workspaceId: r.workspace_id,
    workflowId: r.workflow_id,
    uploadedBy: r.uploaded_by,
    accessScope: r.access_scope as AccessScope,
    listed: r.listed === 1,
    extension: r.extension,
    originalName: r.original_name,
    contentType: r.content_type,
    sizeBytes: r.size_bytes,
    status: r.status as FileStatus,
    storageKey: r.storage_key,
    source: r.source as FileSource,
    uploadExpiresAt: r.upload_expires_at,
    createdAt: r.created_at,
    uploadedAt: r.uploaded_at,
  };
}

/** Reads and writes file records; the bytes live in a FileStorage. */
export class FileRepo {
  constructor(private readonly db: Db) {}

  async create(record: FileRecord): Promise<void> {
    await this.db
      .insertInto('files')
      .values({
        id: record.id,
        organization_id: record.organizationId,
        workspace_id: record.workspaceId,
        workflow_id: record.workflowId,
        uploaded_by: record.uploadedBy,
        access_scope: record.accessScope,
        listed: record.listed ? 1 : 0,
        extension: record.extension,
        original_name: record.originalName,
        content_type: record.contentType,
        size_bytes: record.sizeBytes,
        status: record.status,
        storage_key: record.storageKey,
        source: record.source,
        upload_expires_at: record.uploadExpiresAt,
        created_at: record.createdAt,
        uploaded_at: record.uploadedAt,
        case_id: record.caseId ?? null,
      })
      .execute();
  }

  async find(id: string): Promise<FileRecord | undefined> {
    const row = await this.db.selectFrom('files').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toRecord(row);
  }

  /**
   * Takes the upload slot of a pending file: one conditional update, so of two
   * concurrent uploads to one URL exactly one wins, on SQLite and Postgres alike.
   */
  async claimForUpload(id: string): Promise<boolean> {
    const result = await this.db
      .updateTable('files')
      .set({ status: 'receiving' })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /** Gives the slot back after a failed upload, so the URL works again until it expires. */
  async releaseClaim(id: string): Promise<void> {
    await this.db
      .updateTable('files')
      .set({ status: 'pending' })
      .where('id', '=', id)
      .where('status', '=', 'receiving')
      .execute();
  }

  async markUploaded(id: string, sizeBytes: number): Promise<void> {
    await this.db
      .updateTable('files')
      .set({ status: 'uploaded', size_bytes: sizeBytes, uploaded_at: new Date().toISOString() })
      .where('id', '=', id)
      .execute();
  }

  /**
   * Uploads left in 'receiving' by a crashed process whose URL has expired:
   * back to 'pending' (the URL is dead, so nothing can claim them again).
   * Returns their ids, so their temporary files can be removed.
   */
  async releaseStuckUploads(now: string): Promise<string[]> {
    const rows = await this.db
      .updateTable('files')
      .set({ status: 'pending' })
      .where('status', '=', 'receiving')
      .where('upload_expires_at', '<', now)
      .returning('id')
      .execute();
    return rows.map((r) => r.id);
  }

  /**
   * Counts one file read of `bytes` against a case's limits, in one
   * conditional upsert so parallel nodes (and workers) cannot overshoot.
   * False, counting nothing, when the read would pass either limit.
   */
  async reserveCaseRead(
    caseId: string,
    bytes: number,
    limits: { maxFiles: number; maxBytes: number },
  ): Promise<boolean> {
    if (limits.maxFiles < 1 || bytes > limits.maxBytes) return false;
    const result = await this.db
      .insertInto('case_file_reads')
      .values({ case_id: caseId, files: 1, bytes })
      .onConflict((oc) =>
        oc
          .column('case_id')
          .doUpdateSet({
            files: sql<number>`case_file_reads.files + 1`,
            bytes: sql<number>`case_file_reads.bytes + ${bytes}`,
          })
          .where(
            sql<boolean>`case_file_reads.files + 1 <= ${limits.maxFiles} and case_file_reads.bytes + ${bytes} <= ${limits.maxBytes}`,
          ),
      )
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
  }

  /**
   * The file library as this viewer may see it: listed, uploaded files of the
   * viewer's organization that the scope rules let it read, newest first.
   * The rules here and FileService.canRead are the same rules; this one runs
   * in SQL so that paging counts only what the viewer sees.
   */
  async listLibrary(viewer: LibraryViewer, filter: LibraryFilter): Promise<FileRecord[]> {
    let query = this.db
      .selectFrom('files')
      .selectAll()
      .where('organization_id', '=', viewer.organizationId)
      .where('listed', '=', 1)
      .where('status', '=', 'uploaded')
      .where((eb) => {
        const readable = [
          eb('access_scope', 'in', ['all', 'organization']),
          eb.and([eb('access_scope', '=', 'user'), eb('uploaded_by', '=', viewer.userId)]),
        ];
        if (viewer.scope.type === 'organization') readable.push(eb('access_scope', '=', 'workspace'));
        else if (viewer.scope.workspaceIds.length > 0) {
          readable.push(
            eb.and([eb('access_scope', '=', 'workspace'), eb('workspace_id', 'in', viewer.scope.workspaceIds)]),
          );
        }
        return eb.or(readable);
      });
    if (filter.workspaceId !== undefined) {
      const workspaceId = filter.workspaceId;
      query = query.where((eb) => eb.or([eb('workspace_id', '=', workspaceId), eb('access_scope', '=', 'all')]));
    }
    if (filter.accessScope !== undefined) query = query.where('access_scope', '=', filter.accessScope);
    if (filter.extension !== undefined) query = query.where('extension', '=', filter.extension);
    const rows = await query
      .orderBy('created_at', 'desc')
      .orderBy('id')
      .limit(filter.limit)
      .offset(filter.offset)
      .execute();
    return rows.map(toRecord);
  }
}
