import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { GenerationRunRecord } from '../../domain/generation/run.js';
import type { ProcessSource } from '../../generation/process-types.js';
import { workflowContract } from './contract.js';

/** What the workflow needs to run; no secret ever travels here (the LLM key is read by activities from config). */
export interface GenerationRunInput {
  runId: string;
  workflowId: string;
  organizationId: string;
  workspaceId: string;
  userId: string;
  prompt: string;
  displayName: string;
  origin: string;
  startedAt: string;
  /** File URLs the key could read at start; the worker checks them again. */
  fileUrls: string[];
  /** Files refused at start (not readable by the key), each with why: noted in the task results. */
  refusedFiles: Array<{ url: string; reason: string }>;
  planner: 'llm' | 'offline';
  timeLimitMs: number;
  maxReviewRounds: number;
  /** The dry run's workflow-task timeout, a case run's (temporal.caseWorkflowTaskTimeoutMs); absent on runs started before. */
  caseWorkflowTaskTimeoutMs?: number;
  /** Set when the run builds from a discovered process: the process as read at start, and the connections offered. */
  process?: ProcessSource;
}

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
