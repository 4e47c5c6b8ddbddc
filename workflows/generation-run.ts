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
import type { GenerationActivities, ReviewOutcome } from '../activities/generation.js';
import type { FileExcerpt, Plan, ReviewProblem, StepBuild } from '../src/domain/generation/plan.js';
import {
  BuildRounds,
  builtAs,
  dryRunProblem,
  GenerationRunState,
  type TaskMeta,
} from '../src/domain/generation/run-state.js';
import type { RunStatus, Specialty } from '../src/domain/generation/run.js';
import { caseFailedType, type CaseFailureDetails } from '../src/temporal/contracts/case-run.js';
import type { WorkflowOf } from '../src/temporal/contracts/contract.js';
import {
  cancelGenerationSignal,
  generationRunQuery,
  type generationRunContract,
} from '../src/temporal/contracts/generation-run.js';
import { startCaseRun } from './start-child.js';

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
 * store, so it outlives Temporal retention. The record and the rounds are
 * GenerationRunState's and BuildRounds' (src/domain/generation/run-state.ts):
 * this driver calls the activities and says what happened.
 */
export const generationRun: WorkflowOf<typeof generationRunContract> = async function generationRun(input) {
  const run = new GenerationRunState(input, () => new Date().toISOString());
  const { record } = run;
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

  const scope = { organizationId: input.organizationId, workspaceId: input.workspaceId, workflowId: input.workflowId };
  const save = (final = false) => genSaveRun({ record, final });

  /** One agent task: recorded as running, then completed / failed / cancelled with its attempt, worker and tokens. */
  async function task<T extends { meta: TaskMeta }>(
    specialty: Specialty,
    workerName: string,
    call: () => Promise<T>,
    summary: (result: T) => string,
  ): Promise<T> {
    const entry = run.startTask(specialty, workerName);
    try {
      const result = await call();
      run.completeTask(entry, result.meta, summary(result));
      return result;
    } catch (err) {
      run.failTask(entry, isCancellation(err), errorText(err));
      throw err;
    }
  }

  async function apply(graph: ReviewOutcome['graph'], plan: Plan, stage: 'skeleton' | 'final'): Promise<void> {
    const applied = await task(
      'applier',
      'applier',
      () =>
        store.genApply({ workflowId: input.workflowId, userId: input.userId, graph, description: plan.description }),
      (r) => `Applied the ${stage} as version ${r.workflowVersionNumber}`,
    );
    run.applied(applied, stage);
  }

  async function dryRun(review: ReviewOutcome, round: number): Promise<ReviewProblem[]> {
    try {
      const run = {
        caseId: `dry-run-${input.runId}-${round}`,
        organizationId: input.organizationId,
        workspaceId: input.workspaceId,
        graph: review.dryRunGraph ?? review.graph,
        inputs: review.sampleInputs,
        deadlineMs: 120_000,
      };
      const child = await startCaseRun(run, input.caseWorkflowTaskTimeoutMs, {
        workflowId: `generation-dry-run-${input.runId}-${round}`,
        parentClosePolicy: ParentClosePolicy.TERMINATE,
      });
      const outcome = await child.result();
      return outcome.status === 'COMPLETED'
        ? []
        : [{ stepId: null, message: `The dry run ended ${outcome.status}`, fromDryRun: true }];
    } catch (err) {
      if (isCancellation(err) || !(err instanceof ChildWorkflowFailure)) throw err;
      const failed =
        err.cause instanceof ApplicationFailure && err.cause.type === caseFailedType
          ? (err.cause.details?.[0] as CaseFailureDetails | undefined)
          : undefined;
      return [dryRunProblem(failed, err.cause?.message ?? err.message, review.stepOfName)];
    }
  }

  async function pipeline(): Promise<RunStatus> {
    await save();
    for (const refused of input.refusedFiles)
      run.note('file_reader', 'skipped', `Skipped ${refused.url}: ${refused.reason}`);
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
      for (const skipped of read.skipped)
        run.note('file_reader', 'skipped', `Skipped ${skipped.url}: ${skipped.reason}`);
    }
    run.reached('triage');
    const source = input.process;
    if (source) {
      // A discovered process with steps is a process: nothing to triage.
      const state = source.ref.versionNumber === null ? 'current state' : `version ${source.ref.versionNumber}`;
      run.note('triage', 'skipped', `Building from the discovered process "${source.ref.name}" (${state})`);
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
      for (const text of planned.notes) run.note('architect', 'completed', text);
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
    run.reached('architect');
    await save();
    await apply(skeleton.graph, plan, 'skeleton');
    run.reached('skeleton');
    await save();

    // Steps decided with the plan (bound integrations, a process's conditions) need no builder.
    const rounds = new BuildRounds(plan, presets, input.maxReviewRounds);
    for (const text of rounds.presetNotes()) run.note('builder', 'completed', text);
    const currentPlan = plan;
    let review: ReviewOutcome;
    for (;;) {
      const round = rounds.round;
      const pending = rounds.pending();
      let done = 0;
      await Promise.all(
        pending.map(async ({ stepId, feedback: stepFeedback }) => {
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
                  feedback: stepFeedback,
                }),
              (r) =>
                r.build.unresolved
                  ? `Step "${step?.name}" needs attention: ${r.build.unresolved}`
                  : `Built step "${step?.name}" as ${builtAs(step?.kind, input.planner)}`,
            );
            rounds.built(stepId, built.build);
          } catch (err) {
            if (isCancellation(err)) throw err;
            rounds.builderFailed(stepId, errorText(err));
          }
          done += 1;
          run.builderAnswered(done, pending.length);
        }),
      );
      await save();
      review = await task(
        'reviewer',
        'reviewer',
        async () => {
          const checked = await store.genReview({
            ...scope,
            runId: input.runId,
            plan: currentPlan,
            builds: rounds.builds,
            bindings,
          });
          return checked.problems.length > 0 ? checked : { ...checked, problems: await dryRun(checked, round) };
        },
        (r) =>
          r.problems.length === 0
            ? ['Validated and dry-ran with sample inputs', ...(r.dryRunNotes ?? [])].join('. ').slice(0, 2000)
            : `Round ${round + 1}: ${r.problems
                .map((p) => p.message)
                .join('; ')
                .slice(0, 1000)}`,
      );
      run.roundReviewed(round);
      await save();
      const decision = rounds.reviewed(review.problems);
      if (!decision.again) {
        run.needAttention(decision.needsAttention);
        break;
      }
    }
    if (rounds.replaceInvalidBuilds()) {
      review = await task(
        'reviewer',
        'reviewer',
        () => store.genReview({ ...scope, runId: input.runId, plan: currentPlan, builds: rounds.builds, bindings }),
        (r) =>
          r.problems.length === 0
            ? 'Replaced failing steps with placeholders that validate'
            : `${r.problems.length} problem(s) remain`,
      );
      if (review.problems.length > 0) throw new Stop('failed');
    }
    await apply(review.graph, currentPlan, 'final');
    run.reached('applied');
    return run.outcome(rounds.problems.length > 0);
  }

  let status: RunStatus;
  try {
    status = await work.run(pipeline);
  } catch (err) {
    if (err instanceof Stop) status = err.status;
    else if (isCancellation(err) || stopReason !== undefined) status = 'cancelled';
    else {
      status = 'failed';
      run.failed(errorText(err));
    }
  }
  limit.cancel();
  run.finish(status, stopReason);
  await CancellationScope.nonCancellable(() => save(true));
  return record;
};

function errorText(err: unknown): string {
  const cause = err instanceof Error && 'cause' in err && err.cause instanceof Error ? err.cause : undefined;
  return (cause?.message ?? (err instanceof Error ? err.message : String(err))).slice(0, 1000);
}
