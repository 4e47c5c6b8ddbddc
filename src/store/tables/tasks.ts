/** Human tasks (human_task nodes) and their history; conventions as in tenancy.ts. */
export interface HumanTaskTable {
  id: string;
  organization_id: string;
  workspace_id: string;
  case_id: string;
  /** The caseflow workflow the case runs. */
  workflow_id: string;
  node_id: string;
  node_name: string;
  temporal_workflow_id: string;
  title: string;
  /** Rendered with the node's inputs when the task opened. */
  instructions: string;
  /** JSON: the form (the node's output_schema). */
  form: string;
  /** user, role or workspace. */
  assignee_type: string;
  /** The user id or role; empty for workspace. */
  assignee_value: string;
  claimed_by: string | null;
  /** open, claimed, completed, expired, cancelled. */
  status: string;
  due_at: string | null;
  /** due_at, or the end of time without one: the soonest-due list's keyset. */
  due_sort: string;
  escalated: number;
  /** JSON outputs once completed. */
  outputs: string | null;
  decided_by: string | null;
  decided_via: string | null;
  decided_at: string | null;
  /** sha256 of the completion link's token (the token is shown once). */
  link_hash: string | null;
  link_expires_at: string | null;
  /** The key that created the completion link (it acts for that key); null without a link. */
  link_key_id: string | null;
  created_at: string;
  updated_at: string;
}

export interface HumanTaskEventTable {
  id: string;
  task_id: string;
  at: string;
  /** The user who acted; null for the case run and completion links. */
  actor_user_id: string | null;
  /** opened, claimed, released, reassigned, escalated, link_created, completed, expired, cancelled. */
  action: string;
  /** JSON details (the outputs of a completion, the new assignee…). */
  details: string;
}

export interface TaskTables {
  human_tasks: HumanTaskTable;
  human_task_events: HumanTaskEventTable;
}
