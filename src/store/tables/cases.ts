/**
 * Case tables. A case row is one run of one pinned workflow version; its
 * status only moves PENDING → RUNNING → one terminal status, and the terminal
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
  /** The comma-separated workspace ids sent at initiation, as sent. */
  workspaces: string | null;
  /** JSON object: `initialInput` from initiation. */
  initial_input: string;
  /** JSON object: the validated inputs of the run, keyed by variable name; null before execute. */
  inputs: string | null;
  callback_url: string | null;
  /** PENDING | RUNNING | COMPLETED | FAILED | CANCELLED | TIMED_OUT */
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
  started_at: string | null;
  finished_at: string | null;
  /** A sub-workflow case: the case whose call_workflow node started it, and that node; null otherwise. */
  parent_case_id: string | null;
  parent_node_id: string | null;
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
}

export interface CaseTables {
  cases: CaseTable;
  case_nodes: CaseNodeTable;
}
