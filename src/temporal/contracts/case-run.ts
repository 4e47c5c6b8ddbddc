import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { CaseProgress, CaseRunInput, CaseRunOutcome } from '../../domain/cases.js';
import type { TaskDecision } from '../../domain/human-tasks.js';
import { workflowContract } from './contract.js';

/** A case's run: interprets the version's graph; each node an activity (workflows/case-run.ts). */
export const caseRunContract = workflowContract<(input: CaseRunInput) => Promise<CaseRunOutcome>>('caseRun');

/** Temporal workflow id of a case run: one per case, so a second start of the same case is refused. */
export function caseWorkflowId(caseId: string): string {
  return `case-${caseId}`;
}

/** The ApplicationFailure type of a run that ended FAILED; its details are one CaseFailureDetails. */
export const caseFailedType = 'CaseFailed';

/** The ApplicationFailure type of a run that ended TIMED_OUT (its case deadline passed). */
export const caseTimedOutType = 'CaseTimedOut';

/** What a sub-workflow's run carries in its memo, so the Temporal UI shows where it comes from. */
export interface ChildCaseMemo {
  parentCaseId: string;
  parentNodeId: string;
}

/** Which node failed a case and how, so a caller (the generation dry run) reads it without parsing the message. */
/** A run that begins after the request that asked for it: the case, and the key that created it, to check again. */
export interface CreatorCheck {
  caseId: string;
  organizationId: string;
  workspaceId: string;
  keyId: string;
}

export interface CaseFailureDetails {
  nodeId: string;
  nodeName: string;
  /** The node's handler_class. */
  handlerClass: string;
  /** The node error's kind (timeout, error, configuration…), when it has one. */
  errorKind?: string;
}

/** Live progress of a running case. */
export const caseProgressQuery = defineQuery<CaseProgress>('caseProgress');

/**
 * A person's decision on a task the case waits on (human_task). Its validator
 * refuses, without writing history, a task the run does not wait on, one
 * already decided, expired or cancelled, or an assignee the task escalated
 * away from (ApplicationFailure of type taskRefusedType, details [TaskRefusal]);
 * the handler answers (null) once the task's row is closed.
 */
export const completeTaskUpdate = defineUpdate<null, [TaskDecision]>('completeTask');
