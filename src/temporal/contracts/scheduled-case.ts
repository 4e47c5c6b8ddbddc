import type { SearchAttributePair } from '@temporalio/common';
import type { CaseRunInput } from '../../domain/cases.js';
import type { FiringOutcome } from '../../domain/schedules.js';
import { workflowContract } from './contract.js';

/** What a schedule's action starts the firing workflow with: only the schedule's id (the rest is read at firing). */
export interface ScheduledCaseInput {
  scheduleId: string;
}

/**
 * One firing of a caseflow schedule (workflows/scheduled-case.ts): creates the case
 * through the case service, then runs it as a child `caseRun` (`case-<caseId>`) and
 * waits for it, so the schedule's overlap policy sees a firing as running while its case runs.
 */
export const scheduledCaseContract =
  workflowContract<(input: ScheduledCaseInput) => Promise<FiringOutcome>>('scheduledCase');

/** Temporal Schedule id of a caseflow schedule (shown on the Temporal UI's Schedules page). */
export function temporalScheduleId(scheduleId: string): string {
  return `schedule-${scheduleId}`;
}

/** Workflow id prefix of a schedule's firings; Temporal appends each firing's scheduled time. */
export function firingWorkflowId(scheduleId: string): string {
  return `scheduled-${scheduleId}`;
}

/** What the firing's first activity gives the workflow. */
export type OpenedFiring =
  | {
      firing: 'started';
      run: CaseRunInput;
      /** How the case's run is shown and filtered in the Temporal UI. */
      labels: { summary: string; details: string; searchAttributes: SearchAttributePair[] };
      /** The run's workflow-task timeout (temporal.caseWorkflowTaskTimeoutMs); absent in firings opened before. */
      workflowTaskTimeoutMs?: number;
    }
  | Extract<FiringOutcome, { firing: 'queued' }>
  | { firing: 'failed'; error: string }
  | { firing: 'orphan' };

/** What the firing's first activity is asked. */
export interface OpenFiringInput {
  scheduleId: string;
  /** The firing workflow's id: one firing (and case) per firing workflow, whatever the retries. */
  firingWorkflowId: string;
  /** ISO time the firing was scheduled for (a backfill's past time, a trigger's now). */
  scheduledAt: string;
}
