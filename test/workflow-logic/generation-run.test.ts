import { randomUUID } from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CaseActivities, EndCaseInput } from '../../activities/cases.js';
import type { GenerationActivities, ReviewOutcome } from '../../activities/generation.js';
import type { TaskMeta } from '../../src/domain/generation/run-state.js';
import type { Plan, StepBuild } from '../../src/domain/generation/plan.js';
import { emptyBuild } from '../../src/domain/generation/builds.js';
import { noUsage, type GenerationRunRecord } from '../../src/domain/generation/run.js';
import {
  cancelGenerationSignal,
  generationRunContract,
  type GenerationRunInput,
  generationWorkflowId,
} from '../../src/temporal/contracts/generation-run.js';
import { startWorkflow } from '../../src/temporal/contracts/start.js';
import type { WorkflowOf } from '../../src/temporal/contracts/contract.js';
import { Graph } from '../support/graphs.js';
import { hangUntilCancelled, until, WorkflowLogic } from './support.js';

/**
 * The generation run's review rounds, its 25-minute limit and its cancel
 * signal, over mocked generation activities (no LLM, store or Python): a
 * one-step plan whose step the mocked builder writes and the mocked reviewer
 * judges. The dry run is the real caseRun workflow as a child, over a graph
 * of inline nodes (its only activity is the mocked endCase).
 */
type GenerationMocks = GenerationActivities & Pick<CaseActivities, 'endCase'>;
let logic: WorkflowLogic<GenerationMocks>;

beforeAll(async () => {
  logic = await WorkflowLogic.start<GenerationMocks>([
    'genReadFiles',
    'genTriage',
    'genArchitect',
    'genBuildStep',
    'genReview',
    'genApply',
    'genSaveRun',
    'endCase',
  ]);
});

afterAll(async () => {
  await logic?.stop();
});

const timeLimitMs = 25 * 60_000;

const plan: Plan = {
  name: 'Doubler',
  description: 'Doubles a number',
  inputs: [{ name: 'a', type: 'float', description: 'a number', sample: '2', allowed_file_types: null }],
  steps: [
    {
      id: 's1',
      name: 'Double',
      kind: 'code',
      description: 'b is twice a',
      inputs: ['a'],
      outputs: [{ name: 'b', type: 'float' }],
      branch_of: null,
      integration: null,
    },
  ],
  outputs: [{ name: 'b', type: 'float' }],
};

/** input(a) → output(a): what the mocked reviewer "assembles"; all inline, so the dry run needs no runNode. */
function assembledGraph(): ReviewOutcome['graph'] {
  const graph = new Graph();
  const input = graph.input([{ name: 'a', type: 'float' }]);
  const output = graph.output([{ name: 'a', type: 'float' }]);
  graph.edge(input, output);
  return { nodes: graph.nodes, edges: graph.edges };
}

function meta(): TaskMeta {
  return { attempt: Context.current().info.attempt, worker: 'mock', usage: noUsage };
}

/** What the mocks saw, in order. */
interface Seen {
  triage: number;
  /** The feedback each builder call was given. */
  builderFeedback: string[][];
  /** The builds each review was asked to check (s1's, when built). */
  reviewed: Array<StepBuild | undefined>;
  applied: string[];
  saved: Array<{ record: GenerationRunRecord; final: boolean }>;
  dryRuns: EndCaseInput[];
  cancelledBuilders: number;
}

interface Behaviour {
  /** Default: buildable. */
  triage?: () => Promise<void>;
  /** Default: a build with source. */
  build?: () => Promise<void>;
  /** Problems the reviewer finds in s1's n-th build (0-based); default none. */
  problemsInBuild?: (n: number) => string[];
}

/** The generation activities the workflow proxies, and endCase for its dry run's case. */
function mocks(behaviour: Behaviour) {
  const seen: Seen = {
    triage: 0,
    builderFeedback: [],
    reviewed: [],
    applied: [],
    saved: [],
    dryRuns: [],
    cancelledBuilders: 0,
  };
  let builtReviews = 0;
  const activities: GenerationMocks = {
    genReadFiles() {
      return Promise.resolve({ files: [], skipped: [], meta: meta() });
    },
    async genTriage() {
      seen.triage += 1;
      await behaviour.triage?.();
      return { verdict: { relevant: true, reason: 'a process' }, meta: meta() };
    },
    genArchitect() {
      return Promise.resolve({ plan, presets: {}, notes: [], meta: meta() });
    },
    async genBuildStep(input) {
      seen.builderFeedback.push(input.feedback);
      try {
        await behaviour.build?.();
      } catch (err) {
        seen.cancelledBuilders += 1;
        throw err;
      }
      const build: StepBuild = { ...emptyBuild, source: 'def main(inputs):\n    return {"b": inputs["a"] * 2}\n' };
      return { build, meta: meta() };
    },
    genReview(input) {
      const build = input.builds.s1;
      seen.reviewed.push(build);
      // The skeleton (nothing built yet) and a placeholder (unresolved) validate.
      const messages = build?.source ? (behaviour.problemsInBuild?.(builtReviews++) ?? []) : [];
      return Promise.resolve({
        graph: assembledGraph(),
        stepOfName: { Double: 's1' },
        problems: messages.map((message) => ({ stepId: 's1', message })),
        sampleInputs: { a: 2 },
        meta: meta(),
      });
    },
    genApply(input) {
      seen.applied.push(input.description);
      return Promise.resolve({
        workflowVersionId: randomUUID(),
        workflowVersionNumber: seen.applied.length,
        meta: meta(),
      });
    },
    genSaveRun(input) {
      seen.saved.push(input);
      return Promise.resolve();
    },
    endCase(end) {
      seen.dryRuns.push(end);
      return Promise.resolve({});
    },
  };
  return { activities, seen };
}

async function runGeneration(
  behaviour: Behaviour,
  maxReviewRounds: number,
  whileRunning?: (handle: WorkflowHandle<WorkflowOf<typeof generationRunContract>>, seen: Seen) => Promise<void>,
) {
  const workflowId = randomUUID();
  const input: GenerationRunInput = {
    runId: randomUUID(),
    workflowId,
    organizationId: randomUUID(),
    workspaceId: randomUUID(),
    userId: randomUUID(),
    prompt: 'Double a number',
    displayName: 'doubler',
    origin: 'api',
    startedAt: new Date().toISOString(),
    fileUrls: [],
    refusedFiles: [],
    planner: 'llm',
    timeLimitMs,
    maxReviewRounds,
  };
  const { activities, seen } = mocks(behaviour);
  const run = await logic.run(
    activities,
    (client, taskQueue) =>
      startWorkflow(client.workflow, generationRunContract, {
        taskQueue,
        workflowId: generationWorkflowId(workflowId),
        args: [input],
      }),
    whileRunning && ((handle) => whileRunning(handle, seen)),
  );
  expect(run.err).toBeUndefined();
  const record = run.result as GenerationRunRecord;
  // The record the workflow returns is the one it saved last, as final.
  expect(seen.saved.at(-1)).toEqual({ record, final: true });
  return { ...run, record, seen, input };
}

function summaries(record: GenerationRunRecord, specialty: string): string[] {
  return record.tasks_by_agent.filter((t) => t.specialty === specialty).map((t) => t.result_summary);
}

describe('review rounds', () => {
  it('rebuilds with the reviewer feedback for as many rounds as maxReviewRounds, then applies placeholders', async () => {
    const run = await runGeneration({ problemsInBuild: (n) => [`line 1: build ${n} does not parse`] }, 2);

    expect(run.record.status).toBe('partial');
    // Round 0 builds from nothing; rounds 1 and 2 rebuild with what the last review found.
    expect(run.seen.builderFeedback).toEqual([
      [],
      ['line 1: build 0 does not parse'],
      ['line 1: build 1 does not parse'],
    ]);
    // The skeleton, three rounds, then the step as a placeholder, which validates.
    expect(
      run.seen.reviewed.map((b) => (b === undefined ? 'skeleton' : b.unresolved ? 'placeholder' : 'built')),
    ).toEqual(['skeleton', 'built', 'built', 'built', 'placeholder']);
    expect(summaries(run.record, 'reviewer').filter((s) => s.startsWith('Round '))).toEqual([
      'Round 1: line 1: build 0 does not parse',
      'Round 2: line 1: build 1 does not parse',
      'Round 3: line 1: build 2 does not parse',
    ]);
    expect(run.record.needs_attention).toEqual(['Double']);
    expect(run.record.applied_versions.map((v) => v.stage)).toEqual(['skeleton', 'final']);
    expect(run.seen.dryRuns).toEqual([]);
    expect(run.record.progress).toBe(1);
  });

  it('stops rebuilding once a round passes review and its dry run, and completes', async () => {
    const run = await runGeneration({ problemsInBuild: (n) => (n === 0 ? ['line 1: does not parse'] : []) }, 3);

    expect(run.record.status).toBe('completed');
    expect(run.seen.builderFeedback).toEqual([[], ['line 1: does not parse']]);
    // The second round's graph ran as a case (the child caseRun) and completed.
    expect(run.seen.dryRuns.map((end) => end.finalize.status)).toEqual(['COMPLETED']);
    expect(run.seen.dryRuns[0]?.finalize.caseId).toBe(`dry-run-${run.input.runId}-1`);
    expect(summaries(run.record, 'reviewer').at(-1)).toBe('Validated and dry-ran with sample inputs');
    expect(run.record.needs_attention).toEqual([]);
    expect(run.record.applied_versions.map((v) => v.stage)).toEqual(['skeleton', 'final']);
  });
});

describe('the 25-minute limit', () => {
  it('ends a run stuck in an agent activity cancelled at 25 minutes, in skipped time', async () => {
    // An LLM out of quota: every attempt asks for 15 minutes, the retry policy waits as asked.
    const quotaExhausted = () =>
      Promise.reject(
        ApplicationFailure.create({ message: 'quota exhausted', type: 'Llm_rate_limit', nextRetryDelay: '15 minutes' }),
      );
    const run = await runGeneration({ triage: quotaExhausted }, 1);

    expect(run.record.status).toBe('cancelled');
    expect(run.timers).toEqual([timeLimitMs]);
    expect(run.workflowMs).toBeGreaterThanOrEqual(timeLimitMs);
    expect(run.workflowMs).toBeLessThan(timeLimitMs + 60_000);
    expect(run.wallMs).toBeLessThan(timeLimitMs / 10);
    // Attempts at 0 and 15 minutes; the third (30 minutes) never comes.
    expect(run.seen.triage).toBe(2);
    expect(run.record.tasks_by_agent.find((t) => t.specialty === 'triage')?.status).toBe('cancelled');
    expect(run.record.tasks_by_agent.at(-1)?.result_summary).toBe(
      'Run stopped by the run time limit (25 minutes); 0 version(s) already applied are kept',
    );
    expect(run.seen.applied).toEqual([]);
  });
});

describe('the cancel signal', () => {
  it('stops the builders, keeps the applied skeleton, and ends the run cancelled', async () => {
    const run = await runGeneration({ build: hangUntilCancelled }, 2, async (handle, seen) => {
      await until(() => seen.builderFeedback.length > 0);
      await handle.signal(cancelGenerationSignal);
      // The cancel reaches the builder's activity (its heartbeat), not only the workflow.
      await until(() => seen.cancelledBuilders > 0);
    });

    expect(run.record.status).toBe('cancelled');
    expect(run.seen.applied).toHaveLength(1);
    expect(run.record.applied_versions).toEqual([
      { workflowVersionId: expect.any(String) as string, workflowVersionNumber: 1, stage: 'skeleton' },
    ]);
    expect(run.record.tasks_by_agent.find((t) => t.specialty === 'builder')).toMatchObject({
      status: 'cancelled',
      result_summary: 'Stopped before it finished',
    });
    expect(run.record.tasks_by_agent.at(-1)?.result_summary).toBe(
      'Run cancelled by the caller; 1 version(s) already applied are kept',
    );
    expect(run.seen.reviewed).toHaveLength(1);
  });
});
