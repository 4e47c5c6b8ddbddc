import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { GenerationRunInput, GenerationRunRecord } from '../../generation/run-types.js';
import { workflowContract } from './contract.js';

/** One AI generation run of a workflow (workflows/generation-run.ts). */
export const generationRunContract =
  workflowContract<(input: GenerationRunInput) => Promise<GenerationRunRecord>>('generationRun');

/** Temporal workflow id of a workflow's generation runs: one active at a time, so a second start conflicts. */
export function generationWorkflowId(workflowId: string): string {
  return `generation-${workflowId}`;
}

/** The run's record as it stands (progress, tasks, outcome). */
export const generationRunQuery = defineQuery<GenerationRunRecord>('generationRun');
/** Stops the run, keeping the work already applied. */
export const cancelGenerationSignal = defineSignal('cancelGeneration');
