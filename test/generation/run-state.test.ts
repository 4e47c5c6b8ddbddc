import { describe, expect, it } from 'vitest';
import { emptyBuild } from '../../src/domain/generation/builds.js';
import type { Plan, PlanStep, StepBuild } from '../../src/domain/generation/plan.js';
import {
  BuildRounds,
  builtAs,
  dryRunProblem,
  GenerationRunState,
  progressAt,
} from '../../src/domain/generation/run-state.js';
import { llmAgentKind } from '../../src/domain/node-kinds/llm-agent.js';

/**
 * The generation run's bookkeeping without Temporal: the record's tasks,
 * progress and end, and the builder ⇄ reviewer rounds (the workflow driver
 * is tested on the time-skipping server in test/workflow-logic/).
 */

/** A clock that ticks a second per reading, so each event's time is visible. */
function clock(): () => string {
  let t = Date.parse('2026-01-01T00:00:00.000Z');
  return () => new Date((t += 1000)).toISOString();
}

const start = {
  runId: 'run-1',
  workflowId: 'wf-1',
  prompt: 'Double a number',
  displayName: 'Doubler',
  origin: 'api',
  startedAt: '2026-01-01T00:00:00.000Z',
  planner: 'offline' as const,
};

const usage = { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 };

function step(id: string, name: string, extra: Partial<PlanStep> = {}): PlanStep {
  return {
    id,
    name,
    kind: 'code',
    description: '',
    inputs: [],
    outputs: [],
    branch_of: null,
    integration: null,
    ...extra,
  };
}

const source: StepBuild = { ...emptyBuild, source: 'def main(): pass' };

describe('generation run state', () => {
  it('records a task from running to completed with its attempt, worker and tokens, summing the run usage', () => {
    const run = new GenerationRunState(start, clock());
    expect(run.record).toMatchObject({ status: 'processing', progress: null, room_active: true });
    const task = run.startTask('triage', 'triage');
    expect(task).toMatchObject({ task_id: 'triage-1', status: 'running', finished_at: null });
    run.completeTask(task, { attempt: 2, worker: 'host/1', usage }, 'Buildable');
    run.completeTask(run.startTask('architect', 'architect'), { attempt: 1, worker: 'host/1', usage }, 'Planned');
    expect(run.record.tasks_by_agent[0]).toMatchObject({
      status: 'completed',
      attempt: 2,
      worker_instance_id: 'host/1',
      usage,
      result_summary: 'Buildable',
    });
    expect(run.record.tasks_by_agent[1]?.task_id).toBe('architect-2');
    expect(run.record.usage.total_tokens).toBe(14);
    expect(run.record.tasks_by_agent[0]?.finished_at).not.toBeNull();
    expect(run.record.last_activity_at > run.record.tasks_by_agent[0]!.finished_at!).toBe(true);
  });

  it('records a failed and a stopped task differently', () => {
    const run = new GenerationRunState(start, clock());
    run.failTask(run.startTask('builder', 'builder:s1'), false, 'the LLM answered 500');
    run.failTask(run.startTask('builder', 'builder:s2'), true, 'ignored');
    expect(run.record.tasks_by_agent.map((t) => [t.status, t.result_summary])).toEqual([
      ['failed', 'the LLM answered 500'],
      ['cancelled', 'Stopped before it finished'],
    ]);
  });

  it('moves progress through the phases, the builders and the review rounds', () => {
    const run = new GenerationRunState(start, clock());
    run.reached('skeleton');
    expect(run.record.progress).toBe(progressAt.skeleton);
    run.builderAnswered(1, 2);
    expect(run.record.progress).toBeCloseTo(0.45);
    run.roundReviewed(0);
    expect(run.record.progress).toBeCloseTo(0.7);
    run.roundReviewed(5);
    expect(run.record.progress).toBe(progressAt.reviewed);
  });

  it('ends partial with a note when steps need attention, completed otherwise', () => {
    const partial = new GenerationRunState(start, clock());
    partial.needAttention(['Double']);
    expect(partial.outcome(false)).toBe('partial');
    expect(partial.record.tasks_by_agent.at(-1)?.result_summary).toBe('Partial: steps needing attention: Double');
    expect(new GenerationRunState(start, clock()).outcome(true)).toBe('partial');
    expect(new GenerationRunState(start, clock()).outcome(false)).toBe('completed');
  });

  it('closes a cancelled run: a note with the versions kept, running tasks stopped, the room closed', () => {
    const run = new GenerationRunState(start, clock());
    // What the applier answered besides the version is not the record's.
    const answer = { workflowVersionId: 'v1', workflowVersionNumber: 1, meta: { attempt: 1 } };
    run.applied(answer, 'skeleton');
    run.startTask('builder', 'builder:s1');
    const record = run.finish('cancelled', 'cancelled by the caller');
    expect(record).toMatchObject({ status: 'cancelled', progress: 1, room_active: false });
    expect(record.finished_at).not.toBeNull();
    expect(record.applied_versions).toEqual([{ workflowVersionId: 'v1', workflowVersionNumber: 1, stage: 'skeleton' }]);
    expect(record.tasks_by_agent.map((t) => [t.specialty, t.status])).toEqual([
      ['builder', 'cancelled'],
      ['reviewer', 'cancelled'],
    ]);
    expect(record.tasks_by_agent[1]?.result_summary).toBe(
      'Run cancelled by the caller; 1 version(s) already applied are kept',
    );
  });

  it('notes a run that failed on an error', () => {
    const run = new GenerationRunState(start, clock());
    run.failed('the store is away');
    expect(run.finish('failed', undefined).tasks_by_agent[0]).toMatchObject({
      specialty: 'reviewer',
      status: 'failed',
      result_summary: 'The run failed: the store is away',
    });
  });
});

describe('build rounds', () => {
  const plan: Pick<Plan, 'steps'> = {
    steps: [step('s1', 'Read'), step('s2', 'Send', { kind: 'integration_action', integration: 'mail' })],
  };
  const presets = { s2: { ...emptyBuild, action: { connection_id: 'c1', action_version_id: 'a1' } } };

  it('builds only the steps the plan did not decide, and notes the preset ones', () => {
    const rounds = new BuildRounds(plan, presets, 2);
    expect(rounds.pending()).toEqual([{ stepId: 's1', feedback: [] }]);
    expect(rounds.presetNotes()).toEqual(['Step "Send" runs the connected integration mail']);
    expect(rounds.builds.s2).toEqual(presets.s2);
  });

  it('gives a step its problems as feedback for the next round, until the review finds nothing', () => {
    const rounds = new BuildRounds(plan, presets, 2);
    rounds.built('s1', source);
    expect(rounds.reviewed([{ stepId: 's1', message: 'line 1: no main' }])).toEqual({ again: true });
    expect(rounds.round).toBe(1);
    expect(rounds.pending()).toEqual([{ stepId: 's1', feedback: ['line 1: no main'] }]);
    expect(rounds.reviewed([])).toEqual({ again: false, needsAttention: [] });
    expect(rounds.replaceInvalidBuilds()).toBe(false);
  });

  it('stops at the round limit with the failing steps needing attention, replaced by placeholders', () => {
    const rounds = new BuildRounds(plan, presets, 1);
    rounds.built('s1', source);
    expect(rounds.reviewed([{ stepId: 's1', message: 'bad' }])).toEqual({ again: true });
    expect(rounds.reviewed([{ stepId: 's1', message: 'still bad' }])).toEqual({
      again: false,
      needsAttention: ['Read'],
    });
    expect(rounds.replaceInvalidBuilds()).toBe(true);
    expect(rounds.builds.s1?.unresolved).toBe('still bad');
  });

  it('stops when nothing is fixable by a builder: a preset step, an environment problem, an unresolved build', () => {
    const preset = new BuildRounds(plan, presets, 3);
    expect(preset.reviewed([{ stepId: 's2', message: 'wrong action' }])).toEqual({
      again: false,
      needsAttention: ['Send'],
    });
    const environment = new BuildRounds(plan, presets, 3);
    expect(
      environment.reviewed([{ stepId: 's1', message: 'needs an LLM', fromDryRun: true, environment: true }]),
    ).toEqual({ again: false, needsAttention: ['Read'] });
    // Only dry-run problems: the builds validate, nothing is replaced.
    expect(environment.replaceInvalidBuilds()).toBe(false);
    const failed = new BuildRounds(plan, presets, 3);
    failed.builderFailed('s1', 'timeout');
    expect(failed.builds.s1?.unresolved).toBe('its builder failed: timeout');
    expect(failed.reviewed([{ stepId: 's1', message: 'placeholder' }])).toEqual({
      again: false,
      needsAttention: ['Read'],
    });
  });
});

describe('generation texts', () => {
  it("maps a dry run's failing LLM node without an LLM to an environment problem of its step", () => {
    const problem = dryRunProblem(
      { nodeName: 'Summarize', handlerClass: llmAgentKind.handlerClass, errorKind: 'configuration' },
      'Node x failed',
      { Summarize: 's3' },
    );
    expect(problem).toMatchObject({ stepId: 's3', fromDryRun: true, environment: true });
    expect(problem.message).toContain('it needs an LLM at run time');
    expect(dryRunProblem(undefined, 'deadline passed', {})).toEqual({
      stepId: null,
      message: 'dry run with sample inputs: deadline passed',
      fromDryRun: true,
    });
  });

  it('says what a builder made of each kind of step', () => {
    expect(builtAs('condition', 'llm')).toBe('a condition');
    expect(builtAs('llm_agent', 'offline')).toContain('none is configured');
    expect(builtAs(undefined, 'llm')).toBe('Python code');
  });
});
