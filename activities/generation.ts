import { hostname } from 'node:os';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { WorkflowGraph } from '../src/domain/graph.js';
import { validateGraph } from '../src/domain/graph-validation.js';
import { FileReadRefused } from '../src/files/file-service.js';
import type { Agents } from '../src/generation/agents.js';
import { assembleGraph } from '../src/generation/graph-assembly.js';
import { LlmAgents } from '../src/generation/llm-agents.js';
import { LlmClient, LlmError } from '../src/llm/llm-client.js';
import { boundBuilds, boundStepProblems, dryRunGraph } from '../src/generation/integration-steps.js';
import { OfflinePlanner } from '../src/generation/offline-planner.js';
import { planFromProcess } from '../src/generation/process-plan.js';
import { askedActions, describesWork, withUnplannedSteps } from '../src/generation/prompt-actions.js';
import type { IntegrationBinding, ProcessSource } from '../src/generation/process-types.js';
import { actionStepProblems } from '../src/generation/toolbox.js';
import type { FileExcerpt, Plan, ReviewProblem, StepBuild, TriageVerdict } from '../src/domain/generation/plan.js';
import { noUsage, type GenerationRunRecord, type TokenUsage } from '../src/domain/generation/run.js';
import type { ActivityDeps } from './deps.js';

/** Who did a task and at which attempt, for the run's Task objects. */
export interface TaskMeta {
  attempt: number;
  worker: string;
  usage: TokenUsage;
}

export interface AgentCall {
  planner: 'llm' | 'offline';
  prompt: string;
}

/** The run's tenancy: the tools offered are the connections of this workspace only. */
export interface RunScope {
  organizationId: string;
  workspaceId: string;
}

export interface ReviewOutcome {
  graph: WorkflowGraph;
  /** What the dry run runs when it differs from graph: integration actions answer samples instead of calling out. */
  dryRunGraph?: WorkflowGraph;
  /** Node name → step id: the case engine reports a failing node by name. */
  stepOfName: Record<string, string>;
  problems: ReviewProblem[];
  sampleInputs: Record<string, unknown>;
  meta: TaskMeta;
}

export interface GenerationActivities {
  genReadFiles(input: {
    organizationId: string;
    workspaceId: string;
    userId: string;
    urls: string[];
  }): Promise<{ files: FileExcerpt[]; skipped: Array<{ url: string; reason: string }>; meta: TaskMeta }>;
  genTriage(input: AgentCall & { files: FileExcerpt[] }): Promise<{ verdict: TriageVerdict; meta: TaskMeta }>;
  genArchitect(
    input: AgentCall & RunScope & { files: FileExcerpt[]; feedback: string[]; process?: ProcessSource },
  ): Promise<{
    plan: Plan;
    /** Builds decided with the plan (a process's conditions and bound integrations, steps needing a connection): no builder runs for them. */
    presets: Record<string, StepBuild>;
    notes: string[];
    meta: TaskMeta;
  }>;
  genBuildStep(
    input: AgentCall & RunScope & { plan: Plan; stepId: string; feedback: string[] },
  ): Promise<{ build: StepBuild; meta: TaskMeta }>;
  genReview(
    input: RunScope & {
      runId: string;
      plan: Plan;
      builds: Record<string, StepBuild>;
      /** A process run's integrations offered by key. */
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

const textTypes = /^(text\/|application\/(json|xml|csv))/;

/**
 * An agent call: heartbeats while it waits, so a cancelled run's cancellation
 * reaches the activity (and aborts the LLM request); LLM errors become Temporal
 * failures, retryable ones left to the retry policy (a 429 waits as asked).
 */
async function agentCall<T>(call: () => Promise<T>): Promise<T> {
  const context = Context.current();
  const beat = setInterval(() => context.heartbeat(), heartbeatEveryMs);
  try {
    return await call();
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
 * The generation team's activities. The LLM key is read here from the
 * worker's configuration, never passed in, so it is in no workflow history.
 */
export function createGenerationActivities(deps: ActivityDeps): GenerationActivities {
  const { generation, files } = deps.services;
  const offline = new OfflinePlanner();
  const { llm } = deps.config;
  const online = llm.baseUrl
    ? new LlmAgents(
        new LlmClient({
          baseUrl: llm.baseUrl,
          apiKey: llm.apiKey,
          model: llm.model,
          timeoutMs: llm.timeoutMs,
          cancellation: () => Context.current().cancellationSignal,
        }),
      )
    : undefined;

  function agents(planner: AgentCall['planner']): Agents {
    if (planner === 'offline') return offline;
    if (!online)
      throw ApplicationFailure.nonRetryable(
        'This worker has no LLM configured (LLM_BASE_URL) but the run was started for one',
        'LlmNotConfigured',
      );
    return online;
  }

  return {
    async genReadFiles(input) {
      const excerpts: FileExcerpt[] = [];
      const skipped: Array<{ url: string; reason: string }> = [];
      for (const url of input.urls) {
        try {
          const file = await files.readForGeneration(url, input, deps.config.generation.maxFileBytes);
          if (!textTypes.test(file.contentType))
            skipped.push({ url, reason: `${file.name}: ${file.contentType} is not text the agents can read` });
          else excerpts.push({ name: file.name, text: file.bytes.toString('utf8') });
        } catch (err) {
          if (!(err instanceof FileReadRefused)) throw err;
          skipped.push({ url, reason: err.message });
        }
      }
      return { files: excerpts, skipped, meta: meta() };
    },

    async genTriage(input) {
      const answer = await agentCall(() => agents(input.planner).triage(input.prompt, input.files));
      // A prompt that asks for work is built, whatever the planner thought of it: what is not built is named.
      const verdict =
        !answer.value.relevant && describesWork(input.prompt)
          ? {
              relevant: true,
              reason: `It asks for work (${askedActions(input.prompt)
                .map((a) => a.text)
                .join('; ')
                .slice(0, 400)}), so it is built; the planner had said: ${answer.value.reason}`.slice(0, 1000),
            }
          : answer.value;
      return { verdict, meta: meta(answer.usage) };
    },

    async genArchitect(input) {
      const { prompt, files, feedback, process } = input;
      const bindings = process?.bindings ?? [];
      // Offline, a process is planned straight from its structure; an LLM gets it as context.
      if (process && input.planner === 'offline') {
        const planned = planFromProcess(process);
        return { ...planned, presets: { ...boundBuilds(planned.plan, bindings), ...planned.presets }, meta: meta() };
      }
      const tools = await generation.toolbox(input.organizationId, input.workspaceId);
      const answer = await agentCall(() =>
        agents(input.planner).architect({ prompt, files, feedback, tools, ...(process ? { process } : {}) }),
      );
      // Measured against the prompt, not the planner's say-so: an asked-for action the plan left out is a step needing attention.
      const checked = process
        ? { plan: answer.value, presets: {}, notes: [] }
        : withUnplannedSteps(prompt, answer.value);
      return {
        plan: checked.plan,
        presets: { ...boundBuilds(checked.plan, bindings), ...checked.presets },
        notes: checked.notes,
        meta: meta(answer.usage),
      };
    },

    async genBuildStep(input) {
      const step = input.plan.steps.find((s) => s.id === input.stepId);
      if (!step) throw ApplicationFailure.nonRetryable(`The plan has no step ${input.stepId}`, 'UnknownStep');
      const tools = await generation.toolbox(input.organizationId, input.workspaceId);
      const answer = await agentCall(() =>
        agents(input.planner).build({ prompt: input.prompt, plan: input.plan, step, feedback: input.feedback, tools }),
      );
      return { build: answer.value, meta: meta(answer.usage) };
    },

    async genReview(input) {
      const assembled = assembleGraph(input.runId, input.plan, input.builds);
      const tools = await generation.toolbox(input.organizationId, input.workspaceId);
      const problems = [
        ...assembled.problems,
        ...boundStepProblems(input.plan, input.bindings ?? []),
        ...actionStepProblems(input.plan, input.builds, tools),
      ];
      // The same validation a hand-made workflow passes, then the same authoring scan as inline code.
      for (const problem of validateGraph(assembled.graph)) {
        const nodeId = /^nodes\.([^.]+)/.exec(problem.path)?.[1];
        problems.push({
          stepId: (nodeId && assembled.stepOfNode[nodeId]) ?? null,
          message: `${problem.path}: ${problem.message}`,
        });
      }
      for (const [nodeId, node] of Object.entries(assembled.graph.nodes)) {
        const source = node.process?.source;
        if (typeof source !== 'string') continue;
        for (const v of await deps.python.scan(source, 'main', input.organizationId)) {
          problems.push({
            stepId: assembled.stepOfNode[nodeId] ?? null,
            message: `security scan, line ${v.line}, col ${v.col}: ${v.message}`,
          });
        }
      }
      const stepOfName = Object.fromEntries(
        Object.entries(assembled.stepOfNode).map(([nodeId, stepId]) => [
          assembled.graph.nodes[nodeId]?.name ?? nodeId,
          stepId,
        ]),
      );
      const dryRun = dryRunGraph(assembled.graph);
      return {
        graph: assembled.graph,
        ...(dryRun ? { dryRunGraph: dryRun } : {}),
        stepOfName,
        problems,
        sampleInputs: assembled.sampleInputs,
        meta: meta(),
      };
    },

    async genApply(input) {
      const problems = validateGraph(input.graph);
      if (problems.length > 0)
        throw ApplicationFailure.nonRetryable(
          `The generated graph does not validate: ${problems[0]?.path}: ${problems[0]?.message}`,
          'InvalidGraph',
        );
      // Saved as drafts: a rebuilt workflow keeps running its active version until a person activates the new one.
      const updated = await generation.applyVersion(input.workflowId, {
        graph: input.graph,
        description: input.description.slice(0, 2048),
        updatedBy: input.userId,
        activeStatus: 'inactive',
      });
      if (!updated)
        throw ApplicationFailure.nonRetryable(`Workflow ${input.workflowId} no longer exists`, 'WorkflowGone');
      return {
        workflowVersionId: updated.version.id,
        workflowVersionNumber: updated.version.versionNumber,
        meta: meta(),
      };
    },

    async genSaveRun(input) {
      await generation.saveRecord(input.record, input.final);
    },
  };
}
