/**
 * Files: one row per presigned upload, created at presign time ('pending'),
 * claimed while bytes arrive ('receiving') and 'uploaded' once the bytes sit
 * in storage. Node outputs are written straight as 'uploaded'.
 */
export interface FileTable {
  id: string;
  organization_id: string;
  /** The owning workspace (given, or the workflow's); null for organization-wide uploads. */
  workspace_id: string | null;
  /** The workflow named at presign time, if any (for the record only). */
  workflow_id: string | null;
  /** The uploading user; null for node outputs. */
  uploaded_by: string | null;
  /** 'all' | 'user' | 'workspace' | 'organization' */
  access_scope: string;
  /** 1 when the file shows in the file library (an accessScope was given). */
  listed: number;
  /** Lower-case, with the leading dot: '.pdf'. */
  extension: string;
  original_name: string | null;
  content_type: string;
  size_bytes: number | null;
  /** 'pending' | 'receiving' | 'uploaded' */
  status: string;
  /** Where the storage backend keeps the bytes. */
  storage_key: string;
  /** 'upload' | 'node_output' */
  source: string;
  /** When the presigned URL stops working; null for node outputs. */
  upload_expires_at: string | null;
  created_at: string;
  uploaded_at: string | null;
  /** The case whose node wrote it (node outputs): erased with the case. Null for uploads. */
  case_id: string | null;
}

/** Per case: how many file reads and bytes its nodes have used (the per-case file limits). */
export interface CaseFileReadTable {
  case_id: string;
  files: number;
  bytes: number | bigint | string;
}

export interface FileTables {
  files: FileTable;
  case_file_reads: CaseFileReadTable;
}
