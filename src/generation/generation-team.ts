import type { WorkflowGraph } from '../domain/graph.js';
import { validateGraph } from '../domain/graph-validation.js';
import type { FileExcerpt, Plan, ReviewProblem, StepBuild, TriageVerdict } from '../domain/generation/plan.js';
import { noUsage, type TokenUsage } from '../domain/token-usage.js';
import { FileReadRefused, type FileService } from '../files/file-service.js';
import type { PythonRunnerPool } from '../python/pool.js';
import type { AgentAnswer, Agents } from './agents.js';
import type { GenerationService } from './generation-service.js';
import { assembleGraph } from './graph-assembly.js';
import { dryRunGraph } from './dry-run-graph.js';
import { boundBuilds, boundStepProblems } from './integration-steps.js';
import { planFromProcess } from './process-plan.js';
import type { IntegrationBinding, ProcessSource } from './process-types.js';
import { askedActions, describesWork, withUnplannedSteps } from './prompt-actions.js';
import { actionStepProblems, callStepProblems } from './toolbox.js';

/** Which planner a run uses: the configured LLM or the built-in offline planner. */
export interface AgentCall {
  planner: 'llm' | 'offline';
  prompt: string;
}

/** The run's tenancy: the tools offered are the connections of this workspace only. */
export interface RunScope {
  organizationId: string;
  workspaceId: string;
}

/** A build task's scope: the workflow being built is never offered as a callee of itself. */
export interface BuildScope extends RunScope {
  workflowId: string;
}

/** A plan with the builds decided along with it and what the planner noted. */
export interface PlannedRun {
  plan: Plan;
  /** Builds decided with the plan (a process's conditions and bound integrations, steps needing a connection): no builder runs for them. */
  presets: Record<string, StepBuild>;
  notes: string[];
  usage: TokenUsage;
}

/** A reviewed plan and builds: the assembled graph and what is wrong with it. */
export interface Review {
  graph: WorkflowGraph;
  /**
   * What the dry run runs when it differs from graph: integration actions and calls of other workflows answer
   * samples, human tasks an assumed answer (dry-run-graph.ts).
   */
  dryRunGraph?: WorkflowGraph;
  /** What the dry run assumed instead of running, for the reviewer's task result. */
  dryRunNotes?: string[];
  /** Node name → step id: the case engine reports a failing node by name. */
  stepOfName: Record<string, string>;
  problems: ReviewProblem[];
  sampleInputs: Record<string, unknown>;
}

/** A task that cannot succeed however often it is tried; `type` names it for Temporal's failure. */
export class GenerationTaskRefused extends Error {
  override readonly name = 'GenerationTaskRefused';
  constructor(
    message: string,
    readonly type: 'LlmNotConfigured' | 'UnknownStep' | 'InvalidGraph' | 'WorkflowGone',
  ) {
    super(message);
  }
}

export interface GenerationTeamDeps {
  generation: Pick<GenerationService, 'toolbox' | 'workflowTools' | 'applyVersion'>;
  files: Pick<FileService, 'readForGeneration'>;
  python: Pick<PythonRunnerPool, 'scan'>;
  /** The largest file the agents read. */
  maxFileBytes: number;
  /** The built-in planner. */
  offline: Agents;
  /** The configured LLM's agents; none without LLM_BASE_URL. */
  online: Agents | undefined;
}

const textTypes = /^(text\/|application\/(json|xml|csv))/;

/**
 * The work of a generation run's tasks (the generation-run workflow's
 * activities are its entry points): reading files, the agents' calls, the
 * review (assembly, validation, scan) and applying a version. The LLM's
 * agents are built once, in the composition root; the key never leaves it.
 */
export class GenerationTeam {
  constructor(private readonly deps: GenerationTeamDeps) {}

  private agents(planner: AgentCall['planner']): Agents {
    if (planner === 'offline') return this.deps.offline;
    if (!this.deps.online)
      throw new GenerationTaskRefused(
        'This worker has no LLM configured (LLM_BASE_URL) but the run was started for one',
        'LlmNotConfigured',
      );
    return this.deps.online;
  }

  /** The files the key may read, as text; anything else is skipped with why. */
  async readFiles(input: RunScope & { userId: string; urls: string[] }): Promise<{
    files: FileExcerpt[];
    skipped: Array<{ url: string; reason: string }>;
  }> {
    const files: FileExcerpt[] = [];
    const skipped: Array<{ url: string; reason: string }> = [];
    for (const url of input.urls) {
      try {
        const file = await this.deps.files.readForGeneration(url, input, this.deps.maxFileBytes);
        if (!textTypes.test(file.contentType))
          skipped.push({ url, reason: `${file.name}: ${file.contentType} is not text the agents can read` });
        else files.push({ name: file.name, text: file.bytes.toString('utf8') });
      } catch (err) {
        if (!(err instanceof FileReadRefused)) throw err;
        skipped.push({ url, reason: err.message });
      }
    }
    return { files, skipped };
  }

  async triage(input: AgentCall & { files: FileExcerpt[] }): Promise<AgentAnswer<TriageVerdict>> {
    const answer = await this.agents(input.planner).triage(input.prompt, input.files);
    // A prompt that asks for work is built, whatever the planner thought of it: what is not built is named.
    const value =
      !answer.value.relevant && describesWork(input.prompt)
        ? {
            relevant: true,
            reason: `It asks for work (${askedActions(input.prompt)
              .map((a) => a.text)
              .join('; ')
              .slice(0, 400)}), so it is built; the planner had said: ${answer.value.reason}`.slice(0, 1000),
          }
        : answer.value;
    return { value, usage: answer.usage };
  }

  /** What a run offers its agents besides Python: connected actions and callable workflows. */
  private async offered(scope: BuildScope) {
    const { organizationId, workspaceId, workflowId } = scope;
    return {
      tools: await this.deps.generation.toolbox(organizationId, workspaceId),
      workflows: await this.deps.generation.workflowTools(organizationId, workspaceId, workflowId),
    };
  }

  async architect(
    input: AgentCall & BuildScope & { files: FileExcerpt[]; feedback: string[]; process?: ProcessSource },
  ): Promise<PlannedRun> {
    const { prompt, files, feedback, process } = input;
    const bindings = process?.bindings ?? [];
    // Offline, a process is planned straight from its structure; an LLM gets it as context.
    if (process && input.planner === 'offline') {
      const planned = planFromProcess(process);
      return {
        ...planned,
        presets: { ...boundBuilds(planned.plan, bindings), ...planned.presets },
        usage: noUsage,
      };
    }
    const answer = await this.agents(input.planner).architect({
      prompt,
      files,
      feedback,
      ...(await this.offered(input)),
      ...(process ? { process } : {}),
    });
    // Measured against the prompt, not the planner's say-so: an asked-for action the plan left out is a step needing attention.
    const checked = process ? { plan: answer.value, presets: {}, notes: [] } : withUnplannedSteps(prompt, answer.value);
    return {
      plan: checked.plan,
      presets: { ...boundBuilds(checked.plan, bindings), ...checked.presets },
      notes: checked.notes,
      usage: answer.usage,
    };
  }

  async buildStep(
    input: AgentCall & BuildScope & { plan: Plan; stepId: string; feedback: string[] },
  ): Promise<AgentAnswer<StepBuild>> {
    const step = input.plan.steps.find((s) => s.id === input.stepId);
    if (!step) throw new GenerationTaskRefused(`The plan has no step ${input.stepId}`, 'UnknownStep');
    return this.agents(input.planner).build({
      prompt: input.prompt,
      plan: input.plan,
      step,
      feedback: input.feedback,
      ...(await this.offered(input)),
    });
  }

  /** Assembles the graph and finds its problems: the plan's, the same validation and scan a hand-made workflow passes. */
  async review(
    input: BuildScope & {
      runId: string;
      plan: Plan;
      builds: Record<string, StepBuild>;
      /** A process run's integrations offered by key. */
      bindings?: IntegrationBinding[];
    },
  ): Promise<Review> {
    const assembled = assembleGraph(input.runId, input.plan, input.builds);
    const { tools, workflows } = await this.offered(input);
    const problems = [
      ...assembled.problems,
      ...boundStepProblems(input.plan, input.bindings ?? []),
      ...actionStepProblems(input.plan, input.builds, tools),
      ...callStepProblems(input.plan, input.builds, workflows),
    ];
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
      for (const v of await this.deps.python.scan(source, 'main', input.organizationId)) {
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
      ...(dryRun ? { dryRunGraph: dryRun.graph, dryRunNotes: dryRun.notes } : {}),
      stepOfName,
      problems,
      sampleInputs: assembled.sampleInputs,
    };
  }

  /** Saves the graph as a new draft version: a rebuilt workflow keeps running its active version until a person activates the new one. */
  async apply(input: {
    workflowId: string;
    userId: string;
    graph: WorkflowGraph;
    description: string;
  }): Promise<{ workflowVersionId: string; workflowVersionNumber: number }> {
    const problems = validateGraph(input.graph);
    if (problems.length > 0)
      throw new GenerationTaskRefused(
        `The generated graph does not validate: ${problems[0]?.path}: ${problems[0]?.message}`,
        'InvalidGraph',
      );
    const updated = await this.deps.generation.applyVersion(input.workflowId, {
      graph: input.graph,
      description: input.description.slice(0, 2048),
      updatedBy: input.userId,
      activeStatus: 'inactive',
    });
    if (!updated) throw new GenerationTaskRefused(`Workflow ${input.workflowId} no longer exists`, 'WorkflowGone');
    return { workflowVersionId: updated.version.id, workflowVersionNumber: updated.version.versionNumber };
  }
}
