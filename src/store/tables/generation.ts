/**
 * Generation tables. A generation_runs row is the run record (the contract's
 * fields as JSON in `record`) with the columns the API filters on; it is
 * written by the run's activities, so it outlives Temporal retention.
 */
export interface GenerationRunTable {
  id: string;
  workflow_id: string;
  organization_id: string;
  workspace_id: string;
  status: string;
  record: string;
  created_by: string;
  started_at: string;
  /** Set when the workflow wrote its last record; a caller's cancel sets status before that. */
  finalized: number;
}

export interface GenerationTables {
  generation_runs: GenerationRunTable;
}
