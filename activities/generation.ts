import { hostname } from 'node:os';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { WorkflowGraph } from '../src/domain/graph.js';
import type { FileExcerpt, Plan, StepBuild, TriageVerdict } from '../src/domain/generation/plan.js';
import { noUsage, type GenerationRunRecord, type TokenUsage } from '../src/domain/generation/run.js';
import type { TaskMeta } from '../src/domain/generation/run-state.js';
import {
  GenerationTaskRefused,
  type AgentCall,
  type BuildScope,
  type PlannedRun,
  type Review,
} from '../src/generation/generation-team.js';
import type { ProcessSource, IntegrationBinding } from '../src/generation/process-types.js';
import { LlmError } from '../src/llm/llm-client.js';
import type { ActivityDeps } from './deps.js';

export type ReviewOutcome = Review & { meta: TaskMeta };

export interface GenerationActivities {
  genReadFiles(input: {
    organizationId: string;
    workspaceId: string;
    userId: string;
    urls: string[];
  }): Promise<{ files: FileExcerpt[]; skipped: Array<{ url: string; reason: string }>; meta: TaskMeta }>;
  genTriage(input: AgentCall & { files: FileExcerpt[] }): Promise<{ verdict: TriageVerdict; meta: TaskMeta }>;
  genArchitect(
    input: AgentCall & BuildScope & { files: FileExcerpt[]; feedback: string[]; process?: ProcessSource },
  ): Promise<Omit<PlannedRun, 'usage'> & { meta: TaskMeta }>;
  genBuildStep(
    input: AgentCall & BuildScope & { plan: Plan; stepId: string; feedback: string[] },
  ): Promise<{ build: StepBuild; meta: TaskMeta }>;
  genReview(
    input: BuildScope & {
      runId: string;
      plan: Plan;
      builds: Record<string, StepBuild>;
      bindings?: IntegrationBinding[];
    },
  ): Promise<ReviewOutcome>;
  genApply(input: {
    workflowId: string;
    userId: string;
    graph: WorkflowGraph;
    description: string;
  }): Promise<{ workflowVersionId: string; workflowVersionNumber: number; meta: TaskMeta }>;
  genSaveRun(input: { record: GenerationRunRecord; final: boolean }): Promise<void>;
}

const worker = `${hostname()}/${process.pid}`;

function meta(usage: TokenUsage = noUsage): TaskMeta {
  return { attempt: Context.current().info.attempt, worker, usage };
}

/** The longest wait a 429's Retry-After may impose between two attempts. */
const maxRetryAfterSeconds = 15 * 60;

/** Well inside the agent activities' heartbeat timeout (workflows/generation-run.ts). */
const heartbeatEveryMs = 5_000;

/** A refused task fails at once; every other error is left to the activity's retry policy. */
async function failRefusedAtOnce<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof GenerationTaskRefused) throw ApplicationFailure.nonRetryable(err.message, err.type);
    throw err;
  }
}

/**
 * An agent call: heartbeats while it waits, so a cancelled run's cancellation
 * reaches the activity (and aborts the LLM request); LLM errors become Temporal
 * failures, retryable ones left to the retry policy (a 429 waits as asked).
 */
async function agentCall<T>(call: () => Promise<T>): Promise<T> {
  const context = Context.current();
  const beat = setInterval(() => context.heartbeat(), heartbeatEveryMs);
  try {
    return await failRefusedAtOnce(call);
  } catch (err) {
    if (!(err instanceof LlmError)) throw err;
    throw ApplicationFailure.create({
      message: err.message,
      type: `Llm_${err.kind}`,
      nonRetryable: !err.retryable,
      // An exhausted quota may ask for minutes; the run's time limit bounds the wait.
      ...(err.retryAfterSeconds !== undefined
        ? { nextRetryDelay: `${Math.min(Math.max(err.retryAfterSeconds, 1), maxRetryAfterSeconds)}s` }
        : {}),
    });
  } finally {
    clearInterval(beat);
  }
}

/**
 * The generation team's activities: entry points into `GenerationTeam`
 * (src/generation/generation-team.ts) that add who ran the task and map
 * failures for Temporal. The LLM key stays in the worker's configuration,
 * so it is in no workflow history.
 */
export function createGenerationActivities(deps: ActivityDeps): GenerationActivities {
  const { generation, generationTeam: team } = deps.services;
  return {
    async genReadFiles(input) {
      return { ...(await team.readFiles(input)), meta: meta() };
    },
    async genTriage(input) {
      const answer = await agentCall(() => team.triage(input));
      return { verdict: answer.value, meta: meta(answer.usage) };
    },
    async genArchitect(input) {
      const { usage, ...planned } = await agentCall(() => team.architect(input));
      return { ...planned, meta: meta(usage) };
    },
    async genBuildStep(input) {
      const answer = await agentCall(() => team.buildStep(input));
      return { build: answer.value, meta: meta(answer.usage) };
    },
    async genReview(input) {
      return { ...(await team.review(input)), meta: meta() };
    },
    async genApply(input) {
      return { ...(await failRefusedAtOnce(() => team.apply(input))), meta: meta() };
    },
    async genSaveRun(input) {
      await generation.saveRecord(input.record, input.final);
    },
  };
}
