/**
 * Case tables. A case row is one run of one pinned workflow version; its
 * status only moves PENDING → (QUEUED →) RUNNING → one terminal status, and the terminal
 * status never changes (every update is guarded in SQL). case_nodes holds the
 * audit of each node, written once per (case, node).
 */
export interface CaseTable {
  id: string;
  organization_id: string;
  workspace_id: string;
  workflow_id: string;
  entity_id: string;
  workflow_version_id: string;
  workflow_version_number: number;
  title: string | null;
  description: string | null;
  ref_user_id: string | null;
  /** email-agent, chat-agent, scheduled, api, manual, agent, service-ai, web-app */
  source: string;
  /** The published web app that launched the case (the contract's unnamed optional string). */
  web_app_id: string | null;
  /** The inbound webhook trigger whose delivery started the case; null for every other start. */
  hook_id: string | null;
  /** The comma-separated workspace ids sent at initiation, as sent. */
  workspaces: string | null;
  /** JSON object: `initialInput` from initiation. */
  initial_input: string;
  /** JSON object: the validated inputs of the run, keyed by variable name; null before execute. */
  inputs: string | null;
  callback_url: string | null;
  /** PENDING | QUEUED | RUNNING | COMPLETED | FAILED | CANCELLED | TIMED_OUT */
  status: string;
  /** JSON { message, nodeId? } when FAILED / TIMED_OUT / CANCELLED. */
  error: string | null;
  /** JSON: results keyed by output variable name → { value, type, displayName }. */
  results: string | null;
  /** Case deadline of this run in milliseconds. */
  deadline_ms: number | null;
  temporal_workflow_id: string | null;
  temporal_run_id: string | null;
  created_by_key_id: string;
  created_by_user_id: string;
  created_at: string;
  /** When the case joined its organization's queue (status QUEUED, over a concurrency cap); null otherwise. */
  queued_at: string | null;
  started_at: string | null;
  finished_at: string | null;
  /** The schedule whose firing created the case (source `scheduled`). */
  schedule_id: string | null;
  /** A delayed start: when the run's first step is due (ISO time); null when it started at execute. */
  start_at: string | null;
  /** The case this one reruns; null for a case started on its own. */
  rerun_of: string | null;
  /** start | failed: where the rerun started; null unless rerun_of is set. */
  rerun_from: string | null;
  /** A sub-workflow case: the case whose call_workflow node started it, and that node; null otherwise. */
  parent_case_id: string | null;
  parent_node_id: string | null;
  /** A sub-workflow case: the top-level case whose calls started it, at any depth; null otherwise. */
  root_case_id: string | null;
}

export interface CaseNodeTable {
  case_id: string;
  node_id: string;
  /** Order in which the node finished (0-based); skipped and never-run nodes come last. */
  seq: number;
  /** completed | failed | skipped | cancelled | not_executed */
  status: string;
  handler_class: string;
  /** JSON objects / arrays */
  inputs: string | null;
  outputs: string | null;
  logs: string;
  error: string | null;
  attempts: number;
  /** JSON TokenUsage of an llm_agent node; null for other kinds. */
  usage: string | null;
  started_at: string | null;
  finished_at: string | null;
  /** activity | workflow | upstream (NodeClock); null on records written before it was kept. */
  clock: string | null;
  /** A call_workflow node: the child case it started. */
  child_case_id: string | null;
  /** JSON ReusedFrom { caseId, nodeId }: a rerun's node that took its outputs from the original; else null. */
  reused_from: string | null;
}

/** A bulk rerun: the cases of a filter, rerun by a Temporal workflow at a bounded rate. */
export interface CaseRerunBatchTable {
  id: string;
  organization_id: string;
  /** JSON string[] of the workspaces the creating key reached with Case: Full; null: the whole organization. */
  workspace_ids: string | null;
  /** JSON RerunFilter: workspaceId, workflowId, status, from, to (to is at most the batch's creation). */
  filter: string;
  /** start | failed */
  rerun_from: string;
  /** original | latest */
  version: string;
  /** RUNNING | COMPLETED | CANCELLED | FAILED */
  status: string;
  /** Cases the filter matched at creation: the batch works through exactly these. */
  matched: number;
  /** The key the reruns are started as (checked again before each step). */
  created_by_key_id: string;
  created_at: string;
  finished_at: string | null;
  /** Why the batch ended FAILED (its key stopped being valid, say); null otherwise. */
  error: string | null;
  temporal_workflow_id: string;
}

/** One original case's outcome in a batch. */
export interface CaseRerunItemTable {
  batch_id: string;
  case_id: string;
  /** started | skipped | failed */
  outcome: string;
  reason: string | null;
  rerun_case_id: string | null;
  at: string;
}

export interface CaseTables {
  cases: CaseTable;
  case_nodes: CaseNodeTable;
  case_rerun_batches: CaseRerunBatchTable;
  case_rerun_items: CaseRerunItemTable;
}
