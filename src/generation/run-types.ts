import { noUsage, type TokenUsage } from '../domain/token-usage.js';

/**
 * Generation run types shared by the API, the generation-run workflow and its
 * activities. Type-only and pure helpers: the workflow bundle imports this module.
 */
import type { ProcessRef, ProcessSource } from './process-types.js';

export const runStatuses = [
  'received',
  'processing',
  'completed',
  'partial',
  'cancelled',
  'irrelevant',
  'failed',
] as const;
export type RunStatus = (typeof runStatuses)[number];
export const activeRunStatuses: readonly RunStatus[] = ['received', 'processing'];

export function isActiveRunStatus(status: string): boolean {
  return (activeRunStatuses as readonly string[]).includes(status);
}

export const taskStatuses = ['running', 'completed', 'failed', 'cancelled', 'skipped'] as const;
export type TaskStatus = (typeof taskStatuses)[number];

export type Specialty = 'file_reader' | 'triage' | 'architect' | 'builder' | 'reviewer' | 'applier';

/** Usage types live in the domain (case nodes record usage too); generation code keeps importing them from here. */
export { addUsage, noUsage, type TokenUsage } from '../domain/token-usage.js';

/** The contract's Task object, plus when it ran and the tokens it used. */
export interface GenerationTask {
  task_id: string;
  specialty: Specialty;
  worker_name: string;
  worker_instance_id: string | null;
  status: TaskStatus;
  attempt: number;
  result_summary: string;
  started_at: string;
  finished_at: string | null;
  usage: TokenUsage;
}

/** The contract's Generation run record (elapsed_ms is computed when it is read). */
export interface GenerationRunRecord {
  workflow_id: string;
  run_id: string;
  status: RunStatus;
  progress: number | null;
  text: string;
  display_name: string;
  origin: string;
  room_active: boolean;
  started_at: string;
  last_activity_at: string;
  finished_at: string | null;
  /** Whether the planner was the configured LLM or the built-in offline planner. */
  planner: 'llm' | 'offline';
  tasks_by_agent: GenerationTask[];
  usage: TokenUsage;
  /** Workflow versions this run applied, oldest first. */
  applied_versions: Array<{ workflowVersionId: string; workflowVersionNumber: number; stage: 'skeleton' | 'final' }>;
  /** Steps left needing attention (status partial), by step name. */
  needs_attention: string[];
  /** The discovered process (and which state of it) the run built from; null for a run from a prompt. */
  source_process: ProcessRef | null;
}

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
  /** Set when the run builds from a discovered process: the process as read at start, and the connections offered. */
  process?: ProcessSource;
}

/** A run's record before any agent worked: what the API stores at start and the workflow begins from. */
export function initialRunRecord(
  run: Pick<
    GenerationRunInput,
    'runId' | 'workflowId' | 'prompt' | 'displayName' | 'origin' | 'startedAt' | 'planner' | 'process'
  >,
): GenerationRunRecord {
  return {
    workflow_id: run.workflowId,
    run_id: run.runId,
    status: 'received',
    progress: null,
    text: run.prompt,
    display_name: run.displayName,
    origin: run.origin,
    room_active: true,
    started_at: run.startedAt,
    last_activity_at: run.startedAt,
    finished_at: null,
    planner: run.planner,
    tasks_by_agent: [],
    usage: noUsage,
    applied_versions: [],
    needs_attention: [],
    source_process: run.process?.ref ?? null,
  };
}
