import { noUsage, type TokenUsage } from '../token-usage.js';

/**
 * Generation run types shared by the API, the generation-run workflow and its
 * activities. Type-only and pure helpers: the workflow bundle imports this module.
 */

/** Which process and which state of it a run built from; recorded in the run record. */
export interface ProcessRef {
  processId: string;
  /** The snapshot asked for; null: the process's current state at the start. */
  processVersionId: string | null;
  versionNumber: number | null;
  name: string;
  /** The process's updatedAt as of the state used (a snapshot's is the process's at snapshot time). */
  processUpdatedAt: string;
}

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
export { noUsage, type TokenUsage } from '../token-usage.js';

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

/** A run's record before any agent worked: what the API stores at start and the workflow begins from. */
export function initialRunRecord(
  run: Pick<GenerationRunRecord, 'planner'> & {
    runId: string;
    workflowId: string;
    prompt: string;
    displayName: string;
    origin: string;
    startedAt: string;
    process?: { ref: ProcessRef };
  },
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
