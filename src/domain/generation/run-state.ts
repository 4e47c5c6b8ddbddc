import { llmAgentKind } from '../node-kinds/llm-agent.js';
import { addUsage, noUsage, type TokenUsage } from '../token-usage.js';
import { emptyBuild, placeholderBuild } from './builds.js';
import type { Plan, PlanStepKind, ReviewProblem, StepBuild } from './plan.js';
import {
  initialRunRecord,
  type GenerationRunRecord,
  type GenerationTask,
  type RunStatus,
  type Specialty,
} from './run.js';

/**
 * A generation run's bookkeeping, without Temporal: the record the query
 * serves (tasks, progress, applied versions, outcome) and the builder ⇄
 * reviewer rounds. Pure and deterministic (the workflow bundle imports it);
 * the caller passes a clock, so the workflow's deterministic time and a
 * test's fixed one both work. The driver is workflows/generation-run.ts.
 */

/** Who did a task and at which attempt, for the run's Task objects. */
export interface TaskMeta {
  attempt: number;
  worker: string;
  usage: TokenUsage;
}

/** The phases a run passes, in order, and where progress stands (0..1) after each; builders and rounds fill between. */
export const progressAt = {
  triage: 0.05,
  architect: 0.15,
  skeleton: 0.3,
  built: 0.6,
  reviewed: 0.85,
  applied: 0.95,
} as const;
export type Phase = keyof typeof progressAt;

/** The run's record as it changes: every method is one event of the run. */
export class GenerationRunState {
  readonly record: GenerationRunRecord;

  constructor(
    start: Parameters<typeof initialRunRecord>[0],
    private readonly now: () => string,
  ) {
    this.record = { ...initialRunRecord(start), status: 'processing', last_activity_at: now() };
  }

  private touch(): void {
    this.record.last_activity_at = this.now();
  }

  private newTask(specialty: Specialty, workerName: string, status: GenerationTask['status']): GenerationTask {
    const task: GenerationTask = {
      task_id: `${specialty}-${this.record.tasks_by_agent.length + 1}`,
      specialty,
      worker_name: workerName,
      worker_instance_id: null,
      status,
      attempt: 1,
      result_summary: '',
      started_at: this.now(),
      finished_at: null,
      usage: noUsage,
    };
    this.record.tasks_by_agent.push(task);
    this.touch();
    return task;
  }

  /** An agent task began: recorded as running until it completes or fails. */
  startTask(specialty: Specialty, workerName: string): GenerationTask {
    return this.newTask(specialty, workerName, 'running');
  }

  completeTask(task: GenerationTask, meta: TaskMeta, summary: string): void {
    Object.assign(task, {
      status: 'completed',
      attempt: meta.attempt,
      worker_instance_id: meta.worker,
      usage: meta.usage,
      result_summary: summary,
    });
    this.record.usage = addUsage(this.record.usage, meta.usage);
    this.endTask(task);
  }

  /** A task that failed, or was stopped (cancelled) before it finished. */
  failTask(task: GenerationTask, cancelled: boolean, errorText: string): void {
    task.status = cancelled ? 'cancelled' : 'failed';
    task.result_summary = cancelled ? 'Stopped before it finished' : errorText;
    this.endTask(task);
  }

  private endTask(task: GenerationTask): void {
    task.finished_at = this.now();
    this.touch();
  }

  /** Something the run decided without an agent (a skipped file, a preset step), as a finished task. */
  note(specialty: Specialty, status: GenerationTask['status'], summary: string): void {
    const task = this.newTask(specialty, specialty, status);
    task.result_summary = summary;
    task.finished_at = task.started_at;
  }

  reached(phase: Phase): void {
    this.record.progress = progressAt[phase];
  }

  /** `done` of this round's `total` builders have answered. */
  builderAnswered(done: number, total: number): void {
    this.record.progress = progressAt.skeleton + ((progressAt.built - progressAt.skeleton) * done) / total;
  }

  /** The review of round `round` (0-based) is in. */
  roundReviewed(round: number): void {
    this.record.progress = Math.min(progressAt.reviewed, progressAt.built + (round + 1) * 0.1);
  }

  applied(version: { workflowVersionId: string; workflowVersionNumber: number }, stage: 'skeleton' | 'final'): void {
    const { workflowVersionId, workflowVersionNumber } = version;
    this.record.applied_versions.push({ workflowVersionId, workflowVersionNumber, stage });
  }

  /** The steps a person must look at; a partial run says so in its last task. */
  needAttention(stepNames: string[]): void {
    this.record.needs_attention = stepNames;
  }

  /** Completed when nothing needs attention and the last review found nothing. */
  outcome(problemsLeft: boolean): RunStatus {
    if (this.record.needs_attention.length > 0)
      this.note('reviewer', 'completed', `Partial: steps needing attention: ${this.record.needs_attention.join(', ')}`);
    return this.record.needs_attention.length === 0 && !problemsLeft ? 'completed' : 'partial';
  }

  /** The run failed on an error of its own (not a decision such as irrelevant). */
  failed(errorText: string): void {
    this.note('reviewer', 'failed', `The run failed: ${errorText}`);
  }

  /** The run ended: tasks still running were stopped, the record closes. `stopReason`: why it was cancelled. */
  finish(status: RunStatus, stopReason: string | undefined): GenerationRunRecord {
    if (status === 'cancelled')
      this.note(
        'reviewer',
        'cancelled',
        `Run ${stopReason ?? 'cancelled'}; ${this.record.applied_versions.length} version(s) already applied are kept`,
      );
    for (const task of this.record.tasks_by_agent) {
      if (task.status === 'running') {
        task.status = 'cancelled';
        task.finished_at = this.now();
      }
    }
    Object.assign(this.record, { status, progress: 1, room_active: false, finished_at: this.now() });
    this.touch();
    return this.record;
  }
}

/** What the round after a review does: build again with feedback, or stop with the steps needing attention. */
export type RoundDecision = { again: true } | { again: false; needsAttention: string[] };

/**
 * The builder ⇄ reviewer rounds over a plan: which steps builders write
 * (those the plan did not decide), the feedback each gets, and when to stop
 * (nothing found, the round limit, or nothing a builder could fix).
 */
export class BuildRounds {
  /** Every step's current build. */
  readonly builds: Record<string, StepBuild>;
  private readonly byBuilder: Set<string>;
  /** The steps this round builds, each with the problems found in its last build. */
  private feedback: Map<string, string[]>;
  private currentRound = 0;
  private lastProblems: ReviewProblem[] = [];

  constructor(
    private readonly plan: Pick<Plan, 'steps'>,
    private readonly presets: Record<string, StepBuild>,
    private readonly maxRounds: number,
  ) {
    this.builds = { ...presets };
    this.byBuilder = new Set(plan.steps.filter((s) => !presets[s.id]).map((s) => s.id));
    this.feedback = new Map([...this.byBuilder].map((id) => [id, []]));
  }

  /** 0-based. */
  get round(): number {
    return this.currentRound;
  }

  get problems(): ReviewProblem[] {
    return this.lastProblems;
  }

  /** What each step decided with the plan (a bound integration, a process's condition) became, for the record. */
  presetNotes(): string[] {
    return this.plan.steps
      .filter((s) => !this.byBuilder.has(s.id))
      .map((step) => {
        const preset = this.presets[step.id] ?? emptyBuild;
        if (preset.action) return `Step "${step.name}" runs the connected integration ${step.integration ?? ''}`;
        if (preset.unresolved) return `Step "${step.name}" needs attention: ${preset.unresolved}`;
        return `Built step "${step.name}" as a condition from the process`;
      });
  }

  /** This round's builder work. */
  pending(): Array<{ stepId: string; feedback: string[] }> {
    return [...this.feedback].map(([stepId, feedback]) => ({ stepId, feedback }));
  }

  built(stepId: string, build: StepBuild): void {
    this.builds[stepId] = build;
  }

  /** One step the LLM could not build leaves that step for a person, not the whole run. */
  builderFailed(stepId: string, errorText: string): void {
    this.builds[stepId] = placeholderBuild(`its builder failed: ${errorText}`);
  }

  /** The round's review is in: another round for what builders can fix, or the end of the rounds. */
  reviewed(problems: ReviewProblem[]): RoundDecision {
    this.lastProblems = problems;
    // A builder can fix only its own step, and no builder can give the worker an LLM.
    const fixable = problems.filter(
      (p): p is ReviewProblem & { stepId: string } =>
        p.stepId !== null && !p.environment && this.byBuilder.has(p.stepId) && !this.builds[p.stepId]?.unresolved,
    );
    if (problems.length === 0 || this.currentRound >= this.maxRounds || fixable.length === 0) {
      const needsAttention = this.plan.steps
        .filter((s) => this.builds[s.id]?.unresolved || problems.some((p) => p.stepId === s.id))
        .map((s) => s.name);
      return { again: false, needsAttention };
    }
    this.feedback = new Map();
    for (const p of fixable) this.feedback.set(p.stepId, [...(this.feedback.get(p.stepId) ?? []), p.message]);
    this.currentRound += 1;
    return { again: true };
  }

  /**
   * A build still failing validation becomes a placeholder, so what is applied always validates; false when the
   * last review found only dry-run problems (the builds validate as they are).
   */
  replaceInvalidBuilds(): boolean {
    if (!this.lastProblems.some((p) => !p.fromDryRun)) return false;
    for (const p of this.lastProblems) if (p.stepId) this.builds[p.stepId] = placeholderBuild(p.message.slice(0, 900));
    return true;
  }
}

/** What a builder made of its step, for the task result; offline, an LLM agent node still needs an LLM to run. */
export function builtAs(kind: PlanStepKind | undefined, planner: GenerationRunRecord['planner']): string {
  switch (kind) {
    case 'condition':
      return 'a condition';
    case 'llm_agent':
      return planner === 'offline'
        ? 'an LLM agent node (llm_agent); it needs an LLM at run time, and none is configured'
        : 'an LLM agent node (llm_agent)';
    case 'integration_action':
      return 'an integration action (integration_action) of a connected integration';
    case 'human_task':
      return 'a task for a person (human_task) with approve / reject routes';
    case 'call_workflow':
      return 'a call of a workflow of the workspace (call_workflow)';
    default:
      return 'Python code';
  }
}

/** The node a failed dry-run case names (the case run's failure details), as far as it is known. */
export interface FailedNode {
  nodeName: string;
  handlerClass: string;
  errorKind?: string;
}

/** A dry run's failure as a review problem, tied to the step whose node failed. */
export function dryRunProblem(
  failed: FailedNode | undefined,
  message: string,
  stepOfName: Record<string, string>,
): ReviewProblem {
  const name = failed?.nodeName;
  // An LLM agent node on a worker without an LLM: the step is built, the environment lacks what it needs.
  const needsLlm = failed?.handlerClass === llmAgentKind.handlerClass && failed.errorKind === 'configuration';
  return {
    stepId: (name && stepOfName[name]) ?? null,
    message: needsLlm
      ? `dry run with sample inputs stopped at "${name ?? 'an LLM agent node'}": it needs an LLM at run time and none is configured (LLM_BASE_URL)`
      : `dry run with sample inputs: ${message}`,
    fromDryRun: true,
    ...(needsLlm ? { environment: true } : {}),
  };
}
