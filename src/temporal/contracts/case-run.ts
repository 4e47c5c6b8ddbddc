import { defineQuery } from '@temporalio/workflow';
import type { CaseProgress, CaseRunInput, CaseRunOutcome } from '../../domain/cases.js';
import { workflowContract } from './contract.js';

/** A case's run: interprets the version's graph; each node an activity (workflows/case-run.ts). */
export const caseRunContract = workflowContract<(input: CaseRunInput) => Promise<CaseRunOutcome>>('caseRun');

/** Temporal workflow id of a case run: one per case, so a second start of the same case is refused. */
export function caseWorkflowId(caseId: string): string {
  return `case-${caseId}`;
}

/** Live progress of a running case. */
export const caseProgressQuery = defineQuery<CaseProgress>('caseProgress');
