import type { AccessScope } from './file-access.js';

export type FileStatus = 'pending' | 'receiving' | 'uploaded';

export type FileSource = 'upload' | 'node_output';

/** A file as the store keeps it (its bytes are in the file storage). */
export interface FileRecord {
  id: string;
  organizationId: string;
  workspaceId: string | null;
  workflowId: string | null;
  uploadedBy: string | null;
  accessScope: AccessScope;
  listed: boolean;
  extension: string;
  originalName: string | null;
  contentType: string;
  sizeBytes: number | null;
  status: FileStatus;
  storageKey: string;
  source: FileSource;
  uploadExpiresAt: string | null;
  createdAt: string;
  uploadedAt: string | null;
  /** The case whose node wrote it (erased with the case); absent for uploads. */
  caseId?: string;
}
