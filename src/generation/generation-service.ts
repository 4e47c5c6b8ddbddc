import { randomUUID } from 'node:crypto';
import { assertWorkspaceGrant, hasGrant, requireWorkspaceGrant } from '../auth/access.js';
import type { AuthContext } from '../domain/auth-context.js';
import type { Config } from '../config/config.js';
import type { Logger } from '../logging/logger.js';
import type { TenancyRepo } from '../store/tenancy-repo.js';
import { defaultGraph } from '../domain/default-graph.js';
import { DomainError } from '../errors.js';
import type { FileService } from '../files/file-service.js';
import type { GenerationRepo, StoredRun } from '../store/generation-repo.js';
import type { ProcessSources } from './process-source.js';
import type { ProcessSource } from './process-types.js';
import type { UpdateWorkflowInput, WorkflowRepo } from '../store/workflow-repo.js';
import type { WorkflowRecord, WorkflowWithVersion } from '../domain/workflow-records.js';
import type { Grant } from '../domain/grants.js';
import { isTemporalUnavailable } from '../temporal/unavailable.js';
import type { GenerationRunInput } from '../temporal/contracts/generation-run.js';
import type { GenerationRunGateway } from '../temporal/gateways/generation-runs.js';
import { initialRunRecord, isActiveRunStatus, noUsage, type GenerationRunRecord } from '../domain/generation/run.js';
import type { Tool } from './toolbox.js';
import type { WorkspaceTools } from './workspace-tools.js';
import { WorkspaceWorkflows, type WorkflowTool } from './workspace-workflows.js';

export interface StartRequest {
  /** Required unless processId is given; with a process, extra instructions for the agents. */
  prompt?: string;
  workflowId?: string;
  processId?: string;
  processVersionId?: string;
  name?: string;
  fileUrls: string[];
}

export interface StartedRun {
  workflowId: string;
  runId: string;
  status: string;
  createdWorkflow: boolean;
}

/** The contract's run record as served: the stored / live record plus the figures derived from its tasks. */
export type RunView = GenerationRunRecord & {
  elapsed_ms: number;
  instances: {
    running: number;
    done: number;
    failed: number;
    by_status: Record<string, number>;
    live: {
      busy: boolean;
      working_agents: number;
      working_agents_detail: Array<{ task_id: string; specialty: string; worker_name: string; started_at: string }>;
      pending_running_tasks: number;
      master_evaluating: boolean;
    };
  };
  task_count: number;
};

function view(record: GenerationRunRecord, now: number): RunView {
  const running = record.tasks_by_agent.filter((t) => t.status === 'running');
  const byStatus: Record<string, number> = {};
  for (const t of record.tasks_by_agent) byStatus[t.status] = (byStatus[t.status] ?? 0) + 1;
  const end = record.finished_at ? Date.parse(record.finished_at) : now;
  return {
    ...record,
    elapsed_ms: Math.max(0, end - Date.parse(record.started_at)),
    instances: {
      running: running.length,
      done: byStatus.completed ?? 0,
      failed: byStatus.failed ?? 0,
      by_status: byStatus,
      live: {
        busy: running.length > 0,
        working_agents: new Set(running.map((t) => t.worker_name)).size,
        working_agents_detail: running.map((t) => ({
          task_id: t.task_id,
          specialty: t.specialty,
          worker_name: t.worker_name,
          started_at: t.started_at,
        })),
        pending_running_tasks: running.length,
        // The orchestrating workflow is deciding the next step: the room is live and no agent is at work.
        master_evaluating: record.room_active && running.length === 0,
      },
    },
    task_count: record.tasks_by_agent.length,
  };
}

/**
 * Generation runs: start (one active run per workflow), read (live from the
 * run's query while it runs, from the store after), cancel. The agents run
 * in the worker (workflows/generation-run.ts, activities/generation.ts).
 */
export interface GenerationServiceDeps {
  runs: GenerationRepo;
  workflows: WorkflowRepo;
  tenancy: TenancyRepo;
  files: FileService;
  /** Discovered processes a run builds from (read under the discovery read's rules). */
  processes: ProcessSources;
  /** The workspace's connected integrations' actions: the agents' tools. */
  tools: WorkspaceTools;
  config: Config;
  /** The runs' workflows in Temporal. */
  temporal: GenerationRunGateway;
  logger: Logger;
}

/** What the agents are told when a run builds from a process; the caller's prompt, if any, follows. */
function processPrompt(source: ProcessSource, prompt: string | undefined): string {
  const { name, description } = source.process;
  const text = `Build the workflow of the discovered process "${name}"${description ? `: ${description}` : ''}`;
  return prompt ? `${text}\n\n${prompt}` : text;
}

export class GenerationService {
  private readonly runs: GenerationRepo;
  private readonly workflows: WorkflowRepo;
  private readonly files: FileService;
  private readonly callables: WorkspaceWorkflows;

  constructor(private readonly ctx: GenerationServiceDeps) {
    this.runs = ctx.runs;
    this.workflows = ctx.workflows;
    this.files = ctx.files;
    this.callables = new WorkspaceWorkflows(ctx.workflows);
  }

  /** Worker side: a generated graph becomes a new version of the run's workflow (undefined: the workflow is gone). */
  applyVersion(workflowId: string, input: UpdateWorkflowInput): Promise<WorkflowWithVersion | undefined> {
    return this.workflows.update(workflowId, input);
  }

  /**
   * Worker side: the actions of the integrations the workspace has connected (live connections
   * only), scoped by the run's organization and workspace.
   */
  toolbox(organizationId: string, workspaceId: string): Promise<Tool[]> {
    return this.ctx.tools.list(organizationId, workspaceId);
  }

  /** Worker side: the workspace's active workflows a generated step may call (not the run's own workflow). */
  workflowTools(organizationId: string, workspaceId: string, runWorkflowId: string): Promise<WorkflowTool[]> {
    return this.callables.list(organizationId, workspaceId, runWorkflowId);
  }

  /** Worker side: the run's record, written at every change so it outlives Temporal retention. */
  saveRecord(record: Parameters<GenerationRepo['save']>[0], final: boolean): Promise<void> {
    return this.runs.save(record, final);
  }

  /** The workflow (404), then the grant in its workspace (403, also for another organization's). */
  private async workflowFor(auth: AuthContext, workflowId: string, grant: Grant): Promise<WorkflowRecord> {
    const workflow = await this.workflows.findWorkflow(workflowId);
    if (!workflow) throw DomainError.notFound(`Workflow ${workflowId} does not exist`);
    assertWorkspaceGrant(auth, { id: workflow.workspaceId, organizationId: workflow.organizationId }, grant);
    return workflow;
  }

  /**
   * `readRequest` parses the body and admits the request (its rate limit); it is called after the
   * access checks (403 / 404 come before a 400 for the body) and before anything is written.
   */
  async start(auth: AuthContext, workspaceId: string, readRequest: () => Promise<StartRequest>): Promise<StartedRun> {
    const workspace = await requireWorkspaceGrant(this.ctx.tenancy, auth, workspaceId, 'workflow:full');
    // Generated steps are inline Python: the same gate as a hand-made workflow with inline source.
    if (!hasGrant(auth, 'code:full'))
      throw DomainError.forbidden('Generation writes inline Python steps, which need Code: Full');
    if (!auth.organizationVerified)
      throw DomainError.forbidden('Generation writes inline Python steps, which need a verified organization');
    const request = await readRequest();
    let workflow: WorkflowRecord | undefined;
    if (request.workflowId) {
      workflow = await this.workflowFor(auth, request.workflowId, 'workflow:full');
      if (workflow.workspaceId !== workspace.id)
        throw DomainError.badRequest(`Workflow ${workflow.id} is not in workspace ${workspace.id}`);
      if (await this.runs.active(workflow.id))
        throw DomainError.conflict(`Workflow ${workflow.id} already has an active generation run`);
    }
    // Discovery: Read in the process's own workspace, checked by the discovery read itself (403 / 404 alike).
    const source = request.processId
      ? await this.ctx.processes.load(auth, workspace.id, request.processId, request.processVersionId)
      : undefined;
    const prompt = source ? processPrompt(source, request.prompt) : (request.prompt ?? '');
    const fileUrls: string[] = [];
    const refusedFiles: GenerationRunInput['refusedFiles'] = [];
    for (const url of new Set(request.fileUrls)) {
      const problem = await this.files.checkCaseFileInput(auth, url, undefined, {
        organizationId: auth.organizationId,
        workspaceId: workspace.id,
        userId: auth.userId,
      });
      if (problem) refusedFiles.push({ url, reason: problem.message });
      else fileUrls.push(url);
    }
    const displayName =
      request.name ??
      source?.ref.name ??
      (prompt.trim().split(/\s+/).slice(0, 8).join(' ').slice(0, 255) || 'Generated workflow');
    const createdWorkflow = workflow === undefined;
    workflow ??= (
      await this.workflows.create({
        organizationId: auth.organizationId,
        workspaceId: workspace.id,
        name: displayName,
        createdBy: auth.userId,
        graph: defaultGraph(),
        activeStatus: 'inactive',
        orgUnitIds: [],
      })
    ).workflow;

    const input: GenerationRunInput = {
      runId: randomUUID(),
      workflowId: workflow.id,
      organizationId: auth.organizationId,
      workspaceId: workspace.id,
      userId: auth.userId,
      prompt,
      displayName,
      origin: 'api',
      startedAt: new Date().toISOString(),
      fileUrls,
      refusedFiles,
      planner: this.ctx.config.llm.baseUrl ? 'llm' : 'offline',
      timeLimitMs: this.ctx.config.generation.timeLimitMs,
      maxReviewRounds: this.ctx.config.generation.maxReviewRounds,
      caseWorkflowTaskTimeoutMs: this.ctx.config.temporal.caseWorkflowTaskTimeoutMs,
      ...(source ? { process: source } : {}),
    };
    const record = initialRunRecord(input);
    await this.runs.insert({
      organizationId: auth.organizationId,
      workspaceId: workspace.id,
      createdBy: auth.userId,
      record,
    });
    let started: 'started' | 'conflict';
    try {
      started = await this.ctx.temporal.start(input, {
        organizationId: auth.organizationId,
        workspaceId: workspace.id,
        workflowId: workflow.id,
      });
    } catch (err) {
      await this.runs.delete(record.run_id);
      if (isTemporalUnavailable(err))
        throw DomainError.unavailable(
          `The workflow engine is unreachable; start the generation of workflow ${workflow.id} again later`,
          5,
        );
      throw err;
    }
    if (started === 'conflict') {
      await this.runs.delete(record.run_id);
      throw DomainError.conflict(`Workflow ${workflow.id} already has an active generation run`);
    }
    return { workflowId: workflow.id, runId: record.run_id, status: record.status, createdWorkflow };
  }

  async get(auth: AuthContext, workflowId: string, runId: string | undefined): Promise<RunView> {
    await this.workflowFor(auth, workflowId, 'workflow:read');
    const run = runId ? await this.runs.find(workflowId, runId) : await this.runs.latest(workflowId);
    if (!run)
      throw DomainError.notFound(
        runId
          ? `Run ${runId} does not exist for workflow ${workflowId}`
          : `Workflow ${workflowId} has no generation run`,
      );
    const live = run.finalized ? undefined : await this.liveRecord(run);
    const record = live ?? run.record;
    // The stored status wins when it is terminal: a caller's cancel is final at once.
    const status = isActiveRunStatus(run.status) ? record.status : run.status;
    const finished = !isActiveRunStatus(status);
    return view(
      {
        ...record,
        status: status as GenerationRunRecord['status'],
        progress: finished ? 1 : record.progress,
        room_active: !finished && record.room_active,
      },
      Date.now(),
    );
  }

  /**
   * The running workflow's own record, when it is this run and answers;
   * undefined otherwise (the store's is used). A run whose workflow closed
   * without writing its end (terminated by an operator, say) is closed here
   * as `failed`, so it does not stay "processing" for ever.
   */
  private async liveRecord(run: StoredRun): Promise<GenerationRunRecord | undefined> {
    try {
      const { record, executionStatus } = await this.ctx.temporal.live(run.workflowId);
      if (record.run_id === run.id && executionStatus === 'RUNNING') return record;
      if (record.run_id !== run.id || executionStatus === 'RUNNING') return undefined;
      const at = new Date().toISOString();
      const closed: GenerationRunRecord = {
        ...record,
        status: 'failed',
        room_active: false,
        progress: 1,
        finished_at: at,
        last_activity_at: at,
      };
      closed.tasks_by_agent = [
        ...record.tasks_by_agent.map((t) =>
          t.status === 'running' ? { ...t, status: 'cancelled' as const, finished_at: at } : t,
        ),
      ];
      closed.tasks_by_agent.push({
        task_id: `reviewer-${closed.tasks_by_agent.length + 1}`,
        specialty: 'reviewer',
        worker_name: 'reviewer',
        worker_instance_id: null,
        status: 'failed',
        attempt: 1,
        result_summary: `The run's workflow ended ${executionStatus} without recording its outcome`,
        started_at: at,
        finished_at: at,
        usage: noUsage,
      });
      await this.runs.save(closed, true);
      return closed;
    } catch (err) {
      this.ctx.logger.debug({ err, runId: run.id }, 'generation run query failed; serving the stored record');
      return undefined;
    }
  }

  async cancel(
    auth: AuthContext,
    workflowId: string,
    runId: string | undefined,
  ): Promise<{ cancelled: boolean; run_id: string; workflow_id: string }> {
    await this.workflowFor(auth, workflowId, 'workflow:full');
    const run = runId ? await this.runs.find(workflowId, runId) : await this.runs.active(workflowId);
    if (!run || !isActiveRunStatus(run.status) || !(await this.runs.markCancelled(run.id))) {
      throw DomainError.notFound(`Workflow ${workflowId} has no active generation run${runId ? ` ${runId}` : ''}`);
    }
    // A run that ended meanwhile needs no signal: the stored status is cancelled already and its last record keeps it.
    await this.ctx.temporal.cancel(workflowId);
    return { cancelled: true, run_id: run.id, workflow_id: workflowId };
  }
}
