import {
  ApplicationFailure,
  CancellationScope,
  ChildWorkflowFailure,
  isCancellation,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
  ParentClosePolicy,
} from '@temporalio/workflow';
import type { GenerationActivities, ReviewOutcome, TaskMeta } from '../activities/generation.js';
import { llmAgentKind } from '../src/domain/node-kinds/llm-agent.js';
import type { FileExcerpt, Plan, PlanStepKind, ReviewProblem, StepBuild } from '../src/domain/generation/plan.js';
import { placeholderBuild } from '../src/domain/generation/builds.js';
import {
  addUsage,
  initialRunRecord,
  noUsage,
  type GenerationRunRecord,
  type GenerationTask,
  type RunStatus,
  type Specialty,
} from '../src/domain/generation/run.js';
import { caseFailedType, caseRunContract, type CaseFailureDetails } from '../src/temporal/contracts/case-run.js';
import type { WorkflowOf } from '../src/temporal/contracts/contract.js';
import {
  cancelGenerationSignal,
  generationRunQuery,
  type generationRunContract,
  type GenerationRunInput,
} from '../src/temporal/contracts/generation-run.js';
import { executeChildWorkflow } from './start-child.js';

/**
 * LLM calls: a timeout per attempt, retries (429, 5xx, timeouts, malformed
 * answers) as activity retries. An unreachable LLM fails the task after about
 * five minutes of backoff; one that hangs runs into the run's time limit.
 */
const agents = proxyActivities<GenerationActivities>({
  startToCloseTimeout: '4 minutes',
  // Agent calls heartbeat, so a cancel reaches a call in flight and a lost worker is noticed early.
  heartbeatTimeout: '30s',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 10 },
});
/** Store, files and review work: no LLM, so no heartbeat; a few retries for a busy database. */
const store = proxyActivities<GenerationActivities>({ startToCloseTimeout: '1 minute', retry: { maximumAttempts: 5 } });
const { genSaveRun } = proxyLocalActivities<GenerationActivities>({
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: 10 },
});

/** Where progress stands after each phase (0..1); builders and review rounds fill the span between. */
const progressAt = { triage: 0.05, architect: 0.15, skeleton: 0.3, built: 0.6, reviewed: 0.85, applied: 0.95 } as const;

class Stop extends Error {
  constructor(readonly status: RunStatus) {
    super(status);
  }
}

/**
 * One generation run: files → triage → architect → skeleton applied → builders
 * (in parallel) ⇄ reviewer (validation, scan, dry run as a case) for a
 * bounded number of rounds → final version applied. A query serves the live
 * record; the cancel signal and a timer (25 minutes) stop further work and
 * keep what was already applied. Every change of the record is saved to the
 * store, so it outlives Temporal retention.
 */
export const generationRun: WorkflowOf<typeof generationRunContract> = async function generationRun(input) {
  const record: GenerationRunRecord = {
    ...initialRunRecord(input),
    status: 'processing',
    last_activity_at: new Date().toISOString(),
  };
  setHandler(generationRunQuery, () => record);
  const work = new CancellationScope();
  let stopReason: string | undefined;
  setHandler(cancelGenerationSignal, () => {
    stopReason ??= 'cancelled by the caller';
    work.cancel();
  });
  const limit = new CancellationScope();
  void limit
    .run(() => sleep(input.timeLimitMs))
    .then(
      () => {
        stopReason ??= `stopped by the run time limit (${Math.round(input.timeLimitMs / 60_000)} minutes)`;
        work.cancel();
      },
      () => undefined,
    );

  const scope = { organizationId: input.organizationId, workspaceId: input.workspaceId };
  const touch = () => {
    record.last_activity_at = new Date().toISOString();
  };
  const save = (final = false) => genSaveRun({ record, final });

  /** One agent task: recorded as running, then completed / failed / cancelled with its attempt, worker and tokens. */
  async function task<T extends { meta: TaskMeta }>(
    specialty: Specialty,
    workerName: string,
    run: () => Promise<T>,
    summary: (result: T) => string,
  ): Promise<T> {
    const entry: GenerationTask = {
      task_id: `${specialty}-${record.tasks_by_agent.length + 1}`,
      specialty,
      worker_name: workerName,
      worker_instance_id: null,
      status: 'running',
      attempt: 1,
      result_summary: '',
      started_at: new Date().toISOString(),
      finished_at: null,
      usage: noUsage,
    };
    record.tasks_by_agent.push(entry);
    touch();
    try {
      const result = await run();
      Object.assign(entry, {
        status: 'completed',
        attempt: result.meta.attempt,
        worker_instance_id: result.meta.worker,
        usage: result.meta.usage,
        result_summary: summary(result),
      });
      record.usage = addUsage(record.usage, result.meta.usage);
      return result;
    } catch (err) {
      entry.status = isCancellation(err) ? 'cancelled' : 'failed';
      entry.result_summary = isCancellation(err) ? 'Stopped before it finished' : errorText(err);
      throw err;
    } finally {
      entry.finished_at = new Date().toISOString();
      touch();
    }
  }

  function note(specialty: Specialty, status: GenerationTask['status'], summary: string): void {
    const at = new Date().toISOString();
    record.tasks_by_agent.push({
      task_id: `${specialty}-${record.tasks_by_agent.length + 1}`,
      specialty,
      worker_name: specialty,
      worker_instance_id: null,
      status,
      attempt: 1,
      result_summary: summary,
      started_at: at,
      finished_at: at,
      usage: noUsage,
    });
    touch();
  }

  async function apply(graph: ReviewOutcome['graph'], plan: Plan, stage: 'skeleton' | 'final'): Promise<void> {
    const applied = await task(
      'applier',
      'applier',
      () =>
        store.genApply({ workflowId: input.workflowId, userId: input.userId, graph, description: plan.description }),
      (r) => `Applied the ${stage} as version ${r.workflowVersionNumber}`,
    );
    record.applied_versions.push({
      workflowVersionId: applied.workflowVersionId,
      workflowVersionNumber: applied.workflowVersionNumber,
      stage,
    });
  }

  async function dryRun(review: ReviewOutcome, round: number): Promise<ReviewProblem[]> {
    try {
      const outcome = await executeChildWorkflow(caseRunContract, {
        workflowId: `generation-dry-run-${input.runId}-${round}`,
        args: [
          {
            caseId: `dry-run-${input.runId}-${round}`,
            organizationId: input.organizationId,
            workspaceId: input.workspaceId,
            graph: review.dryRunGraph ?? review.graph,
            inputs: review.sampleInputs,
            deadlineMs: 120_000,
          },
        ],
        parentClosePolicy: ParentClosePolicy.TERMINATE,
      });
      return outcome.status === 'COMPLETED'
        ? []
        : [{ stepId: null, message: `The dry run ended ${outcome.status}`, fromDryRun: true }];
    } catch (err) {
      if (isCancellation(err) || !(err instanceof ChildWorkflowFailure)) throw err;
      const message = err.cause?.message ?? err.message;
      const failed =
        err.cause instanceof ApplicationFailure && err.cause.type === caseFailedType
          ? (err.cause.details?.[0] as CaseFailureDetails | undefined)
          : undefined;
      const name = failed?.nodeName;
      // An LLM agent node on a worker without an LLM: the step is built, the environment lacks what it needs.
      const needsLlm = failed?.handlerClass === llmAgentKind.handlerClass && failed.errorKind === 'configuration';
      return [
        {
          stepId: (name && review.stepOfName[name]) ?? null,
          message: needsLlm
            ? `dry run with sample inputs stopped at "${name ?? 'an LLM agent node'}": it needs an LLM at run time and none is configured (LLM_BASE_URL)`
            : `dry run with sample inputs: ${message}`,
          fromDryRun: true,
          ...(needsLlm ? { environment: true } : {}),
        },
      ];
    }
  }

  async function pipeline(): Promise<RunStatus> {
    await save();
    for (const refused of input.refusedFiles)
      note('file_reader', 'skipped', `Skipped ${refused.url}: ${refused.reason}`);
    let files: FileExcerpt[] = [];
    if (input.fileUrls.length > 0) {
      const read = await task(
        'file_reader',
        'file_reader',
        () =>
          store.genReadFiles({
            organizationId: input.organizationId,
            workspaceId: input.workspaceId,
            userId: input.userId,
            urls: input.fileUrls,
          }),
        (r) => `Read ${r.files.length} file(s)`,
      );
      files = read.files;
      for (const skipped of read.skipped) note('file_reader', 'skipped', `Skipped ${skipped.url}: ${skipped.reason}`);
    }
    record.progress = progressAt.triage;
    const source = input.process;
    if (source) {
      // A discovered process with steps is a process: nothing to triage.
      const state = source.ref.versionNumber === null ? 'current state' : `version ${source.ref.versionNumber}`;
      note('triage', 'skipped', `Building from the discovered process "${source.ref.name}" (${state})`);
    } else {
      const triage = await task(
        'triage',
        'triage',
        () => agents.genTriage({ planner: input.planner, prompt: input.prompt, files }),
        (r) => `${r.verdict.relevant ? 'Buildable' : 'Not a buildable process'}: ${r.verdict.reason}`,
      );
      await save();
      if (!triage.verdict.relevant) return 'irrelevant';
    }
    const bindings = source?.bindings;

    // The architect plans until the skeleton assembles and validates (bounded).
    let plan: Plan | undefined;
    let presets: Record<string, StepBuild> = {};
    let skeleton: ReviewOutcome | undefined;
    let feedback: string[] = [];
    for (let attempt = 0; attempt <= input.maxReviewRounds && (!skeleton || skeleton.problems.length > 0); attempt++) {
      const planned = await task(
        'architect',
        'architect',
        () =>
          agents.genArchitect({
            ...scope,
            planner: input.planner,
            prompt: input.prompt,
            files,
            feedback,
            ...(source ? { process: source } : {}),
          }),
        (r) =>
          `Planned ${r.plan.inputs.length} input(s), ${r.plan.steps.length} step(s), ${r.plan.outputs.length} output(s)`,
      );
      plan = planned.plan;
      presets = planned.presets;
      for (const text of planned.notes) note('architect', 'completed', text);
      skeleton = await task(
        'reviewer',
        'reviewer',
        // Builds decided with the plan take part from the start: a bound integration must fit its step.
        () => store.genReview({ ...scope, runId: input.runId, plan: planned.plan, builds: planned.presets, bindings }),
        (r) =>
          r.problems.length === 0
            ? 'The plan assembles into a valid graph'
            : `${r.problems.length} problem(s) in the plan`,
      );
      feedback = skeleton.problems.map((p) => p.message);
    }
    if (!plan || !skeleton || skeleton.problems.length > 0) throw new Stop('failed');
    record.progress = progressAt.architect;
    await save();
    await apply(skeleton.graph, plan, 'skeleton');
    record.progress = progressAt.skeleton;
    await save();

    // Steps decided with the plan (bound integrations, a process's conditions) need no builder.
    const builds: Record<string, StepBuild> = { ...presets };
    const byBuilder = new Set(plan.steps.filter((s) => !presets[s.id]).map((s) => s.id));
    for (const step of plan.steps.filter((s) => !byBuilder.has(s.id))) {
      const preset = presets[step.id];
      if (preset?.action)
        note('builder', 'completed', `Step "${step.name}" runs the connected integration ${step.integration ?? ''}`);
      else if (preset?.unresolved)
        note('builder', 'completed', `Step "${step.name}" needs attention: ${preset.unresolved}`);
      else note('builder', 'completed', `Built step "${step.name}" as a condition from the process`);
    }
    const stepFeedback = new Map<string, string[]>([...byBuilder].map((id) => [id, []]));
    let review: ReviewOutcome;
    let problems: ReviewProblem[] = [];
    for (let round = 0; ; round++) {
      const toBuild = [...stepFeedback.keys()];
      const currentPlan = plan;
      let done = 0;
      await Promise.all(
        toBuild.map(async (stepId) => {
          const step = currentPlan.steps.find((s) => s.id === stepId);
          try {
            const built = await task(
              'builder',
              `builder:${stepId}`,
              () =>
                agents.genBuildStep({
                  ...scope,
                  planner: input.planner,
                  prompt: input.prompt,
                  plan: currentPlan,
                  stepId,
                  feedback: stepFeedback.get(stepId) ?? [],
                }),
              (r) =>
                r.build.unresolved
                  ? `Step "${step?.name}" needs attention: ${r.build.unresolved}`
                  : `Built step "${step?.name}" as ${builtAs(step?.kind, input.planner)}`,
            );
            builds[stepId] = built.build;
          } catch (err) {
            // One step the LLM could not build leaves that step for a person, not the whole run.
            if (isCancellation(err)) throw err;
            builds[stepId] = placeholderBuild(`its builder failed: ${errorText(err)}`);
          }
          done += 1;
          record.progress = progressAt.skeleton + ((progressAt.built - progressAt.skeleton) * done) / toBuild.length;
        }),
      );
      await save();
      review = await task(
        'reviewer',
        'reviewer',
        async () => {
          const checked = await store.genReview({ ...scope, runId: input.runId, plan: currentPlan, builds, bindings });
          return checked.problems.length > 0 ? checked : { ...checked, problems: await dryRun(checked, round) };
        },
        (r) =>
          r.problems.length === 0
            ? 'Validated and dry-ran with sample inputs'
            : `Round ${round + 1}: ${r.problems
                .map((p) => p.message)
                .join('; ')
                .slice(0, 1000)}`,
      );
      problems = review.problems;
      record.progress = Math.min(progressAt.reviewed, progressAt.built + (round + 1) * 0.1);
      await save();
      const unresolved = currentPlan.steps.filter((s) => builds[s.id]?.unresolved);
      // A builder can fix only its own step, and no builder can give the worker an LLM.
      const fixable = problems.filter(
        (p) => p.stepId !== null && !p.environment && byBuilder.has(p.stepId) && !builds[p.stepId]?.unresolved,
      );
      if (problems.length === 0 || round >= input.maxReviewRounds || fixable.length === 0) {
        record.needs_attention = currentPlan.steps
          .filter((s) => unresolved.includes(s) || problems.some((p) => p.stepId === s.id))
          .map((s) => s.name);
        break;
      }
      stepFeedback.clear();
      for (const p of fixable)
        stepFeedback.set(p.stepId as string, [...(stepFeedback.get(p.stepId as string) ?? []), p.message]);
    }
    // A build still failing validation becomes a placeholder so what is applied always validates.
    if (problems.some((p) => !p.fromDryRun)) {
      for (const p of problems) if (p.stepId) builds[p.stepId] = placeholderBuild(p.message.slice(0, 900));
      review = await task(
        'reviewer',
        'reviewer',
        () => store.genReview({ ...scope, runId: input.runId, plan, builds, bindings }),
        (r) =>
          r.problems.length === 0
            ? 'Replaced failing steps with placeholders that validate'
            : `${r.problems.length} problem(s) remain`,
      );
      if (review.problems.length > 0) throw new Stop('failed');
    }
    await apply(review.graph, plan, 'final');
    record.progress = progressAt.applied;
    if (record.needs_attention.length > 0)
      note('reviewer', 'completed', `Partial: steps needing attention: ${record.needs_attention.join(', ')}`);
    return record.needs_attention.length === 0 && problems.length === 0 ? 'completed' : 'partial';
  }

  let status: RunStatus;
  try {
    status = await work.run(pipeline);
  } catch (err) {
    if (err instanceof Stop) status = err.status;
    else if (isCancellation(err) || stopReason !== undefined) status = 'cancelled';
    else {
      status = 'failed';
      note('reviewer', 'failed', `The run failed: ${errorText(err)}`);
    }
  }
  limit.cancel();
  if (status === 'cancelled')
    note(
      'reviewer',
      'cancelled',
      `Run ${stopReason ?? 'cancelled'}; ${record.applied_versions.length} version(s) already applied are kept`,
    );
  for (const t of record.tasks_by_agent) {
    if (t.status === 'running') {
      t.status = 'cancelled';
      t.finished_at = new Date().toISOString();
    }
  }
  record.status = status;
  record.progress = 1;
  record.room_active = false;
  record.finished_at = new Date().toISOString();
  touch();
  await CancellationScope.nonCancellable(() => save(true));
  return record;
};

/** What a builder made of its step, for the task result; offline, an LLM agent node still needs an LLM to run. */
function builtAs(kind: PlanStepKind | undefined, planner: GenerationRunInput['planner']): string {
  switch (kind) {
    case 'condition':
      return 'a condition';
    case 'llm_agent':
      return planner === 'offline'
        ? 'an LLM agent node (llm_agent); it needs an LLM at run time, and none is configured'
        : 'an LLM agent node (llm_agent)';
    case 'integration_action':
      return 'an integration action (integration_action) of a connected integration';
    default:
      return 'Python code';
  }
}

function errorText(err: unknown): string {
  const cause = err instanceof Error && 'cause' in err && err.cause instanceof Error ? err.cause : undefined;
  return (cause?.message ?? (err instanceof Error ? err.message : String(err))).slice(0, 1000);
}
