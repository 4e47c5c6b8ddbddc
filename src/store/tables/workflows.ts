/**
 * Workflow tables. A workflow row holds what does not change per version
 * (ids, tenancy, authorship); every graph change is a new immutable
 * workflow_versions row, so running cases keep the version they started on.
 */
export interface WorkflowTable {
  id: string;
  /** The workflow's catalog entry id: returned as `entityId`, accepted as `referenceEntityId`. */
  entity_id: string;
  organization_id: string;
  workspace_id: string;
  /** Name and description of the latest version (the versions keep their own snapshot). */
  name: string;
  description: string | null;
  builder_type: string;
  created_by: string;
  created_at: string;
  updated_at: string;
  /** JSON array of org unit ids (best-effort tags). */
  org_unit_ids: string;
  /** Cases of this workflow running at once; null: no cap of its own. */
  max_concurrent_cases: number | null;
}

export interface WorkflowVersionTable {
  id: string;
  workflow_id: string;
  /** 1 for the first version, +1 per update. */
  version_number: number;
  /** 'active' or 'inactive' */
  status: string;
  /** JSON of { nodes, edges } */
  graph: string;
  name: string;
  description: string | null;
  created_by: string;
  created_at: string;
}

export interface WorkflowTables {
  workflows: WorkflowTable;
  workflow_versions: WorkflowVersionTable;
}
