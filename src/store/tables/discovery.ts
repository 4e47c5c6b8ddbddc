/**
 * Discovered-process tables. A discovery_processes row holds the current
 * document (JSON, every field of the contract's process but the ones the
 * service derives); every snapshot copies it into an immutable
 * discovery_process_versions row, so a read by processVersionId returns the
 * process exactly as it was when the snapshot was taken.
 */
export interface DiscoveryProcessTable {
  id: string;
  organization_id: string;
  workspace_id: string;
  /** JSON of the ProcessContent (src/discovery/process-schema.ts). */
  content: string;
  /** +1 per update; updates compare-and-set it so none is merged onto a stale base. */
  revision: number;
  /** Snapshots taken so far; the next snapshot's number is this + 1. */
  snapshot_count: number;
  created_by: string;
  created_at: string;
  updated_at: string;
}

export interface DiscoveryProcessVersionTable {
  /** The `processVersionId`. */
  id: string;
  process_id: string;
  /** 1 for the first snapshot of a process, +1 per snapshot. */
  version_number: number;
  content: string;
  /** The process's updatedAt when the snapshot was taken (what a read of it answers). */
  process_updated_at: string;
  created_by: string;
  created_at: string;
}

export interface DiscoveryTables {
  discovery_processes: DiscoveryProcessTable;
  discovery_process_versions: DiscoveryProcessVersionTable;
}
