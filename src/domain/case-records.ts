import type { CaseError, CaseResults, CaseStatus, RerunFrom } from './cases.js';

/** A case as the store keeps it and the services return it (the API's views map it). */
export interface CaseRecord {
  id: string;
  organizationId: string;
  workspaceId: string;
  workflowId: string;
  entityId: string;
  workflowVersionId: string;
  workflowVersionNumber: number;
  title: string | null;
  description: string | null;
  refUserId: string | null;
  source: string;
  webAppId: string | null;
  /** The hook whose delivery started the case (docs/webhook-triggers.md); null for every other start. */
  hookId: string | null;
  workspaces: string | null;
  initialInput: Record<string, unknown>;
  inputs: Record<string, unknown> | null;
  callbackUrl: string | null;
  status: CaseStatus;
  error: CaseError | null;
  results: CaseResults | null;
  deadlineMs: number | null;
  temporalWorkflowId: string | null;
  temporalRunId: string | null;
  createdByKeyId: string;
  createdByUserId: string;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  /** The schedule whose firing created the case. */
  scheduleId: string | null;
  /** A delayed start: when the run begins. */
  startAt: string | null;
  /** When the case joined its queue over a concurrency cap (status QUEUED until admitted); null when it never waited. */
  queuedAt: string | null;
  /** The case this one reruns, and from where; null for a case started on its own. */
  rerunOf: string | null;
  rerunFrom: RerunFrom | null;
  /** A sub-workflow case: the case and call_workflow node that started it. */
  parent: CaseParent | null;
}

/** Where a sub-workflow case comes from. */
export interface CaseParent {
  caseId: string;
  nodeId: string;
}

/** A case as the list shows it: without its inputs, results and node records. */
export type CaseSummary = Pick<
  CaseRecord,
  | 'id'
  | 'organizationId'
  | 'workspaceId'
  | 'workflowId'
  | 'workflowVersionId'
  | 'workflowVersionNumber'
  | 'title'
  | 'source'
  | 'status'
  | 'error'
  | 'createdAt'
  | 'startedAt'
  | 'finishedAt'
>;
