import { defineQuery } from '@temporalio/workflow';
import { workflowContract } from './contract.js';

/** Where a batch stands in its newest-first walk of the matching cases: the last case it went through. */
export interface RerunCursor {
  createdAt: string;
  id: string;
}

export interface RerunBatchInput {
  batchId: string;
  /** Reruns started at most per second (cases.rerunBatch.perSecond at creation). */
  perSecond: number;
  /** Set when the run continues as new: the cases up to here are done. */
  after?: RerunCursor;
}

/** How far the batch got; the store has each case's outcome. */
export interface RerunBatchOutcome {
  status: 'COMPLETED' | 'CANCELLED' | 'FAILED';
  /** Cases gone through by this run (since its last continue-as-new). */
  processed: number;
}

/** One step: the next `limit` matching cases after `after`, each rerun or skipped, and recorded. */
export interface RerunStepRequest {
  batchId: string;
  after?: RerunCursor;
  limit: number;
}

export interface RerunStepResult {
  /** Cases gone through in this step (fewer than the limit: the last step). */
  processed: number;
  /** The last case gone through; absent when there were none left. */
  last?: RerunCursor;
}

/** The type of the failure a step throws when the batch cannot go on (its key no longer valid); details: none. */
export const rerunBatchStoppedType = 'RerunBatchStopped';

/** A bulk rerun: works through the cases a filter matched at a bounded rate (workflows/rerun-batch.ts). */
export const rerunBatchContract =
  workflowContract<(input: RerunBatchInput) => Promise<RerunBatchOutcome>>('rerunBatch');

/** Temporal workflow id of a batch: one per batch. */
export function rerunBatchWorkflowId(batchId: string): string {
  return `case-rerun-${batchId}`;
}

/** Cases gone through by the batch's current run (the store has the totals). */
export const rerunBatchProgressQuery = defineQuery<{ processed: number }>('rerunBatchProgress');
