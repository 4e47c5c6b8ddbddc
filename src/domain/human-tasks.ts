import type { VariableSchema } from './variables.js';

/**
 * Human tasks: what a `human_task` node asks of a person, shared by the node
 * kind, the case run (which waits for the decision), the tasks service and
 * the API. Types and pure functions only: the workflow bundle imports it.
 */

export const memberRoles = ['owner', 'admin', 'member'] as const;
type MemberRole = (typeof memberRoles)[number];

/**
 * Who decides: one user of the organization, the members with a role, or
 * anyone whose key holds Case: Read in the task's workspace. Holders of
 * Case: Full in the workspace may always decide.
 */
export type TaskAssignee =
  { type: 'user'; user_id: string } | { type: 'role'; role: MemberRole } | { type: 'workspace' };

/** What happens when a task is due: hand it to another assignee (once), take a route, or fail the node. */
type DueAction =
  | { action: 'fail' }
  | { action: 'route'; route_id: string }
  | { action: 'escalate'; assignee: TaskAssignee; due_after_ms?: number };

export const taskStatuses = ['open', 'claimed', 'completed', 'expired', 'cancelled'] as const;
export type TaskStatus = (typeof taskStatuses)[number];

/** A task the case waits on, as the case status shows it. */
export interface WaitingTask {
  taskId: string;
  nodeId: string;
  title: string;
  /** ISO time; absent when the task has no due time (the case's maximum wait still applies). */
  dueAt?: string;
}

/** What a node asks of a person, prepared in the workflow from the node and its inputs. */
export interface PersonWait {
  title: string;
  /** With each `{{ name }}` replaced by the node input of that name. */
  instructions: string;
  assignee: TaskAssignee;
  /** Epoch ms; absent: no due time. */
  dueAt?: number;
  onDue: DueAction;
  /** The form: the node's output_schema. */
  form: VariableSchema;
}

/** Who decided, for the task history and the case audit. */
export interface TaskActor {
  /** The user behind the API key; absent for a completion link. */
  userId?: string;
  via: 'api' | 'link';
}

/** A completion as the API hands it to the waiting case (the Update's argument). */
export interface TaskDecision {
  taskId: string;
  /** Checked against the form by the tasks service before it is sent. */
  outputs: Record<string, unknown>;
  actor: TaskActor;
  /**
   * The assignee the caller was allowed as, when being the assignee is its
   * only right to decide: refused once the task escalated away from it.
   */
  asAssignee?: string;
}

/** A task as the case run opens it: its row in the store. */
export interface OpenTaskInput {
  taskId: string;
  caseId: string;
  organizationId: string;
  workspaceId: string;
  nodeId: string;
  nodeName: string;
  temporalWorkflowId: string;
  wait: PersonWait;
}

/** How a task ended, as the case run closes its row. */
export interface CloseTaskInput {
  taskId: string;
  status: 'completed' | 'expired' | 'cancelled';
  outputs?: Record<string, unknown>;
  actor?: TaskActor;
  /** Why it ended, for the task history (the due time passed, the case was cancelled…). */
  reason?: string;
}

/** The due time passed and the task goes to its escalation assignee. */
export interface EscalateTaskInput {
  taskId: string;
  assignee: TaskAssignee;
  /** Epoch ms; absent: no further due time. */
  dueAt?: number;
}

/** Why the case refused a completion (the Update validator's failure type and reasons). */
export const taskRefusedType = 'TaskRefused';
export type TaskRefusal = 'unknown' | 'completed' | 'expired' | 'cancelled' | 'unauthorized';

/** The longest a case may wait on people in all, unless configured (cases.maxWaitMs): 30 days. */
export const defaultMaxWaitMs = 30 * 24 * 3600 * 1000;

/** An assignee as one comparable string (user:<id>, role:<role>, workspace). */
export function assigneeKey(assignee: TaskAssignee): string {
  if (assignee.type === 'user') return `user:${assignee.user_id}`;
  if (assignee.type === 'role') return `role:${assignee.role}`;
  return 'workspace';
}

/**
 * `{{ variable_name }}` in a task's instructions: a new expression at each use, as a global one keeps state
 * (`lastIndex`), which the workflow bundle's preloaded modules may not (src/temporal/workflow-preload.ts).
 */
export const templatePlaceholder = (): RegExp => /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/** The names the instructions refer to. */
export function templateNames(template: string): string[] {
  return [...template.matchAll(templatePlaceholder())].map((m) => m[1] ?? '');
}

/** Each placeholder replaced by the value of that name (text as is, other values as JSON, missing as empty). */
export function renderInstructions(template: string, values: Record<string, unknown>): string {
  return template.replace(templatePlaceholder(), (_match, name: string) => {
    const value = values[name];
    if (value === undefined || value === null) return '';
    return typeof value === 'string' ? value : JSON.stringify(value);
  });
}

/** A human task as stored. */
export interface TaskRecord {
  id: string;
  organizationId: string;
  workspaceId: string;
  caseId: string;
  workflowId: string;
  nodeId: string;
  nodeName: string;
  temporalWorkflowId: string;
  title: string;
  instructions: string;
  form: VariableSchema;
  assignee: TaskAssignee;
  claimedBy: string | null;
  status: TaskStatus;
  dueAt: string | null;
  escalated: boolean;
  outputs: Record<string, unknown> | null;
  decidedBy: string | null;
  decidedVia: TaskActor['via'] | null;
  decidedAt: string | null;
  linkExpiresAt: string | null;
  /** The key that created the completion link, which the link acts for; null without one (or made before it was kept). */
  linkKeyId: string | null;
  createdAt: string;
  updatedAt: string;
}

/** One entry of a task's history: who did what, when. */
export interface TaskEvent {
  at: string;
  actorUserId: string | null;
  action: string;
  details: Record<string, unknown>;
}

/** A history entry with the task and node it belongs to, as a case's audit reads them. */
export interface CaseTaskEvent extends TaskEvent {
  taskId: string;
  nodeId: string;
}

/** A history entry as one line of the node's audit log: what happened to which task, by whom, with its details. */
export function taskEventMessage(event: CaseTaskEvent): string {
  const by = event.actorUserId ? ` by user ${event.actorUserId}` : '';
  const details = Object.keys(event.details).length > 0 ? `: ${JSON.stringify(event.details)}` : '';
  return `Task ${event.taskId} ${event.action.replaceAll('_', ' ')}${by}${details}`;
}
