import { createHash, randomBytes } from 'node:crypto';
import { Gauge, Histogram, type Registry } from 'prom-client';
import { assertWorkspaceGrant, canUseWorkspace, listScope, type ListRequest } from '../auth/access.js';
import type { AuthContext } from '../domain/auth-context.js';
import { validateFormValues } from '../cases/case-inputs.js';
import { assertOutputsWithinLimit } from '../cases/payload-limits.js';
import { statsWindow } from '../cases/case-stats.js';
import type { WorkflowGraph } from '../domain/graph.js';
import type { GraphProblem } from '../domain/graph-validation.js';
import {
  assigneeKey,
  type CloseTaskInput,
  type EscalateTaskInput,
  type OpenTaskInput,
  type TaskActor,
  type TaskAssignee,
  type TaskStatus,
} from '../domain/human-tasks.js';
import { humanTaskKind } from '../domain/node-kinds/human-task.js';
import { handlerClassName } from '../domain/vocabulary.js';
import { DomainError } from '../errors.js';
import type { CaseRepo } from '../store/case-repo.js';
import type { Page } from '../domain/page.js';
import type { TaskEvent, TaskRecord } from '../domain/human-tasks.js';
import type { TaskRepo } from '../store/task-repo.js';
import type { KeyAuthentication } from '../auth/key-authentication.js';
import { TaskRefusedError, type TaskDecisionGateway } from '../temporal/gateways/task-decisions.js';
import { workspaceTaskStats, type TaskStats } from './task-stats.js';

export interface TaskServiceDeps {
  repo: TaskRepo;
  cases: CaseRepo;
  decisions: TaskDecisionGateway;
  /** Where the open-task gauge and the time-to-decision histogram are registered. */
  registry: Registry;
  /** How long a completion link of a task without a due time lasts (the case's maximum wait). */
  linkTtlMs: number;
  /** The most a decision's outputs may be as JSON: they are the node's outputs (cases.maxNodeOutputBytes). */
  maxOutputBytes: number;
  /** Whether the key that created a completion link may still act for it (each time the link is used). */
  authentication: Pick<KeyAuthentication, 'refusal'>;
}

/** A completion link as created: the token is in the URL only, shown once. */
export interface TaskLink {
  token: string;
  expiresAt: string;
}

/** What a completion link leads to: the form, or why not (never which tasks exist). */
export type LinkState =
  | { page: 'form'; task: TaskRecord; problems?: Array<{ field: string; message: string }> }
  | { page: 'done'; task: TaskRecord }
  | { page: 'invalid' }
  | { page: 'expired' }
  | { page: 'closed'; status: TaskStatus }
  /** The key that created the link was revoked, expired, its user left or it lost Case: Full there. */
  | { page: 'withdrawn' };

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

/** A task with its history, as its detail answers. */
export interface TaskDetails {
  task: TaskRecord;
  history: TaskEvent[];
}

export interface TaskListRequest extends ListRequest {
  status?: TaskStatus;
  /** A user id, or `me`: the caller's user. */
  assignee?: string;
  caseId?: string;
  workflowId?: string;
  dueBefore?: string;
  sort: 'newest' | 'soonest_due';
}

/** A window of closing times, optionally one workspace. */
export interface TaskStatsRequest {
  workspaceId?: string;
  from?: string;
  to?: string;
}

const decidable: TaskStatus[] = ['open', 'claimed'];

function notFound(taskId: string): DomainError {
  return DomainError.notFound(`Task ${taskId} does not exist`);
}

function finished(task: TaskRecord): DomainError {
  return DomainError.conflict(`Task ${task.id} is ${task.status}: it takes no more decisions`, { status: task.status });
}

/**
 * Human tasks: the rows the case run opens and closes (worker side), the
 * inbox (list, detail, claim, release, reassign, complete) and who may do
 * what. Reads need Case: Read in the task's workspace; decisions Case: Full
 * there, or being the task's assignee. Completions go to the waiting case
 * as an Update: the case decides the one winner, then closes the row.
 */
export class TaskService {
  private readonly decisionSeconds: Histogram;

  constructor(private readonly deps: TaskServiceDeps) {
    const repo = deps.repo;
    new Gauge({
      name: 'caseflow_human_tasks_open',
      // No tenant label (/metrics names no organization or workspace): per workspace, GET /api/v1/tasks.
      help: 'Human tasks waiting for a decision (open or claimed)',
      registers: [deps.registry],
      async collect() {
        const rows = await repo.openByWorkspace();
        this.set(rows.reduce((sum, row) => sum + row.open, 0));
      },
    });
    this.decisionSeconds = new Histogram({
      name: 'caseflow_human_task_decision_seconds',
      help: 'From a task opening to its completion',
      buckets: [60, 600, 3600, 4 * 3600, 24 * 3600, 3 * 24 * 3600, 7 * 24 * 3600, 30 * 24 * 3600],
      registers: [deps.registry],
    });
  }

  // The case run's side (activities).

  /** Opens the task's row (again: a retried activity finds it there). */
  async open(input: OpenTaskInput): Promise<void> {
    const record = await this.deps.cases.find(input.caseId);
    if (!record) throw new Error(`case ${input.caseId} of task ${input.taskId} is missing`);
    const { wait } = input;
    await this.deps.repo.insert(
      {
        id: input.taskId,
        organizationId: input.organizationId,
        workspaceId: input.workspaceId,
        caseId: input.caseId,
        workflowId: record.workflowId,
        nodeId: input.nodeId,
        nodeName: input.nodeName,
        temporalWorkflowId: input.temporalWorkflowId,
        title: wait.title,
        instructions: wait.instructions,
        form: wait.form,
        assignee: wait.assignee,
        dueAt: wait.dueAt === undefined ? null : new Date(wait.dueAt).toISOString(),
      },
      { actorUserId: null, action: 'opened', details: { assignee: wait.assignee } },
    );
  }

  /** Closes the row as the case run decided; a row closed already stays as it is. */
  async close(input: CloseTaskInput): Promise<void> {
    const at = new Date().toISOString();
    const closed = await this.deps.repo.transition(
      input.taskId,
      { statuses: decidable },
      {
        // The link's hash stays: a used link then says the task is decided rather than unknown.
        status: input.status,
        ...(input.outputs ? { outputs: input.outputs } : {}),
        ...(input.actor ? { decidedBy: input.actor.userId ?? null, decidedVia: input.actor.via, decidedAt: at } : {}),
      },
      {
        actorUserId: input.actor?.userId ?? null,
        action: input.status,
        details: {
          ...(input.outputs ? { outputs: input.outputs } : {}),
          ...(input.actor ? { via: input.actor.via } : {}),
          ...(input.reason ? { reason: input.reason } : {}),
        },
      },
    );
    if (closed && input.status === 'completed') {
      const task = await this.deps.repo.find(input.taskId);
      if (task) this.decisionSeconds.observe((Date.parse(at) - Date.parse(task.createdAt)) / 1000);
    }
  }

  /** The due time passed: the task goes to its escalation assignee, unclaimed. */
  async escalate(input: EscalateTaskInput): Promise<void> {
    await this.deps.repo.transition(
      input.taskId,
      { statuses: decidable },
      {
        status: 'open',
        assignee: input.assignee,
        claimedBy: null,
        escalated: true,
        dueAt: input.dueAt === undefined ? null : new Date(input.dueAt).toISOString(),
      },
      { actorUserId: null, action: 'escalated', details: { assignee: input.assignee } },
    );
  }

  // Save-time checks of a workflow's human_task nodes.

  /** Users named as assignees must be members of the workflow's organization. */
  async assigneeProblems(auth: AuthContext, graph: WorkflowGraph): Promise<GraphProblem[]> {
    const problems: GraphProblem[] = [];
    for (const [key, node] of Object.entries(graph.nodes)) {
      if (handlerClassName(node) !== humanTaskKind.handlerClass) continue;
      const process = node.process as { assignee?: TaskAssignee; on_due?: { assignee?: TaskAssignee } } | undefined;
      const named: Array<[string, TaskAssignee | undefined]> = [
        ['process.assignee', process?.assignee],
        ['process.on_due.assignee', process?.on_due?.assignee],
      ];
      for (const [path, assignee] of named) {
        if (assignee?.type !== 'user') continue;
        if (!(await this.deps.repo.memberRole(auth.organizationId, assignee.user_id)))
          problems.push({
            path: `nodes.${key}.${path}.user_id`,
            message: `User ${assignee.user_id} is not a member of this organization`,
          });
      }
    }
    return problems;
  }

  // The inbox.

  async list(auth: AuthContext, request: TaskListRequest): Promise<Page<TaskRecord>> {
    const scope = listScope(auth, 'case:read', request);
    if (!scope) return { items: [], nextCursor: null };
    const userId = request.assignee === 'me' ? auth.userId : request.assignee;
    return this.deps.repo.list({
      ...scope,
      ...(request.status ? { statuses: [request.status] } : {}),
      caseId: request.caseId,
      workflowId: request.workflowId,
      dueBefore: request.dueBefore === undefined ? undefined : new Date(request.dueBefore).toISOString(),
      ...(userId ? { assignedTo: { userId, role: await this.deps.repo.memberRole(auth.organizationId, userId) } } : {}),
      sort: request.sort,
    });
  }

  /**
   * The caller's figures per workspace (Case: Read): tasks waiting now, those closed in the window (default the
   * last day, at most 31 days) and the time to each decision; the per-tenant view /metrics does not label.
   */
  async stats(auth: AuthContext, request: TaskStatsRequest): Promise<TaskStats> {
    const window = statsWindow(request);
    const scope = listScope(auth, 'case:read', { workspaceId: request.workspaceId, limit: 0 });
    if (!scope) return { ...window, workspaces: [] };
    const rows = await this.deps.repo.stats({
      organizationId: scope.organizationId,
      workspaceIds: scope.workspaceIds,
      closedFrom: window.from,
      closedBefore: window.to,
    });
    return { ...window, workspaces: workspaceTaskStats(rows) };
  }

  async details(auth: AuthContext, taskId: string): Promise<TaskDetails> {
    const task = await this.load(auth, taskId);
    return { task, history: await this.deps.repo.events(taskId) };
  }

  /** Takes the task: others see it claimed; only the claimer or Case: Full decide it now. */
  async claim(auth: AuthContext, taskId: string): Promise<TaskDetails> {
    const task = await this.load(auth, taskId);
    await this.decider(auth, task);
    if (task.status === 'claimed')
      throw DomainError.conflict(`Task ${taskId} is claimed already`, { claimedBy: task.claimedBy });
    if (task.status !== 'open') throw finished(task);
    const claimed = await this.deps.repo.transition(
      taskId,
      { statuses: ['open'] },
      { status: 'claimed', claimedBy: auth.userId },
      { actorUserId: auth.userId, action: 'claimed', details: {} },
    );
    if (!claimed) throw DomainError.conflict(`Task ${taskId} changed meanwhile: read it again`);
    return this.details(auth, taskId);
  }

  /** Gives a claimed task back (the claimer, or Case: Full). */
  async release(auth: AuthContext, taskId: string): Promise<TaskDetails> {
    const task = await this.load(auth, taskId);
    const right = await this.decider(auth, task);
    if (task.status === 'open') throw DomainError.conflict(`Task ${taskId} is not claimed`);
    if (task.status !== 'claimed') throw finished(task);
    if (!right.full && task.claimedBy !== auth.userId)
      throw DomainError.forbidden(`Task ${taskId} is claimed by another user; Case: Full may release it`);
    const released = await this.deps.repo.transition(
      taskId,
      { statuses: ['claimed'], claimedBy: task.claimedBy },
      { status: 'open', claimedBy: null },
      { actorUserId: auth.userId, action: 'released', details: {} },
    );
    if (!released) throw DomainError.conflict(`Task ${taskId} changed meanwhile: read it again`);
    return this.details(auth, taskId);
  }

  /** Hands the task to another assignee (Case: Full); a claim ends, and so does its completion link (given to someone else). */
  async reassign(auth: AuthContext, taskId: string, assignee: TaskAssignee): Promise<TaskDetails> {
    const task = await this.load(auth, taskId);
    assertWorkspaceGrant(auth, { id: task.workspaceId, organizationId: task.organizationId }, 'case:full');
    if (!decidable.includes(task.status)) throw finished(task);
    if (assignee.type === 'user' && !(await this.deps.repo.memberRole(auth.organizationId, assignee.user_id)))
      throw DomainError.invalidFields([
        { field: 'body.assignee.user_id', message: `User ${assignee.user_id} is not a member of this organization` },
      ]);
    const moved = await this.deps.repo.transition(
      taskId,
      { statuses: decidable },
      { status: 'open', assignee, claimedBy: null, linkHash: null, linkExpiresAt: null, linkKeyId: null },
      { actorUserId: auth.userId, action: 'reassigned', details: { from: task.assignee, to: assignee } },
    );
    if (!moved) throw finished((await this.deps.repo.find(taskId)) ?? task);
    return this.details(auth, taskId);
  }

  /** Completes the form: checked against it, then handed to the waiting case, which has the last word. */
  async complete(auth: AuthContext, taskId: string, outputs: Record<string, unknown>): Promise<TaskDetails> {
    const task = await this.load(auth, taskId);
    const right = await this.decider(auth, task);
    if (!decidable.includes(task.status)) throw finished(task);
    if (task.status === 'claimed' && task.claimedBy !== auth.userId && !right.full)
      throw DomainError.conflict(`Task ${taskId} is claimed by another user`, { claimedBy: task.claimedBy });
    const actor: TaskActor = { userId: auth.userId, via: 'api' };
    await this.decide(task, outputs, actor, right.full ? undefined : assigneeKey(task.assignee));
    return this.details(auth, taskId);
  }

  /**
   * A single-use link for a person without a key (Case: Full): it replaces the
   * task's previous link and expires with the task (its due time), else after
   * the case's maximum wait. Only its hash is stored. The link acts for the key
   * that created it: once that key may no longer decide here, neither may the link.
   */
  async createLink(auth: AuthContext, taskId: string): Promise<TaskLink> {
    const task = await this.load(auth, taskId);
    assertWorkspaceGrant(auth, { id: task.workspaceId, organizationId: task.organizationId }, 'case:full');
    if (!decidable.includes(task.status)) throw finished(task);
    const token = randomBytes(32).toString('base64url');
    const ttlEnd = new Date(Date.now() + this.deps.linkTtlMs).toISOString();
    const expiresAt = task.dueAt !== null && task.dueAt < ttlEnd ? task.dueAt : ttlEnd;
    const stored = await this.deps.repo.transition(
      taskId,
      { statuses: decidable },
      { linkHash: hashToken(token), linkExpiresAt: expiresAt, linkKeyId: auth.keyId },
      { actorUserId: auth.userId, action: 'link_created', details: { expiresAt } },
    );
    if (!stored) throw finished((await this.deps.repo.find(taskId)) ?? task);
    return { token, expiresAt };
  }

  /** Where a completion link stands. */
  async linkState(token: string): Promise<LinkState> {
    const task = await this.deps.repo.findByLinkHash(hashToken(token));
    if (!task) return { page: 'invalid' };
    if (!decidable.includes(task.status)) return { page: 'closed', status: task.status };
    if (task.linkExpiresAt !== null && task.linkExpiresAt <= new Date().toISOString()) return { page: 'expired' };
    const { linkKeyId, workspaceId, organizationId } = task;
    if (
      linkKeyId !== null &&
      (await this.deps.authentication.refusal(
        linkKeyId,
        `the completion link of task ${task.id}`,
        { id: workspaceId, organizationId },
        'case:full',
      )) !== null
    )
      return { page: 'withdrawn' };
    return { page: 'form', task };
  }

  /** Completes the task through its link: the form again with the problems, or done. */
  async completeByLink(token: string, values: Record<string, unknown>): Promise<LinkState> {
    const state = await this.linkState(token);
    if (state.page !== 'form') return state;
    try {
      await this.decide(state.task, values, { via: 'link' }, undefined);
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      const fields = (err.metadata?.fields as Array<{ field: string; message: string }> | undefined) ?? [];
      if (fields.length > 0) return { ...state, problems: fields };
      // The case refused it: decided, due or cancelled meanwhile.
      return this.linkState(token);
    }
    const task = await this.deps.repo.find(state.task.id);
    return task ? { page: 'done', task } : { page: 'invalid' };
  }

  private async decide(
    task: TaskRecord,
    values: Record<string, unknown>,
    actor: TaskActor,
    asAssignee: string | undefined,
  ): Promise<void> {
    const checked = validateFormValues(task.form, values, 'body.outputs');
    if (checked.problems.length > 0) throw DomainError.invalidFields(checked.problems);
    // The outputs go into the case's history as the node's, and on to the next nodes: bounded as a node's are.
    assertOutputsWithinLimit(checked.inputs, this.deps.maxOutputBytes, 'body.outputs');
    try {
      await this.deps.decisions.complete(task.temporalWorkflowId, {
        taskId: task.id,
        outputs: checked.inputs,
        actor,
        ...(asAssignee ? { asAssignee } : {}),
      });
    } catch (err) {
      if (!(err instanceof TaskRefusedError)) throw err;
      if (err.reason === 'unauthorized') throw DomainError.forbidden(err.message);
      throw DomainError.conflict(err.message, { reason: err.reason });
    }
  }

  /** The task, if the key reads cases in its workspace; another organization's is not there (404). */
  private async load(auth: AuthContext, taskId: string): Promise<TaskRecord> {
    const task = await this.deps.repo.find(taskId);
    if (!task || task.organizationId !== auth.organizationId) throw notFound(taskId);
    assertWorkspaceGrant(auth, { id: task.workspaceId, organizationId: task.organizationId }, 'case:read');
    return task;
  }

  /** Whether the key may decide the task: Case: Full in its workspace, or being its assignee. */
  private async decider(auth: AuthContext, task: TaskRecord): Promise<{ full: boolean }> {
    const workspace = { id: task.workspaceId, organizationId: task.organizationId };
    if (canUseWorkspace(auth, workspace, 'case:full')) return { full: true };
    if (await this.isAssignee(auth, task.assignee)) return { full: false };
    throw DomainError.forbidden(
      `This API key lacks Case: Full in the workspace and is not the assignee of task ${task.id}`,
    );
  }

  private async isAssignee(auth: AuthContext, assignee: TaskAssignee): Promise<boolean> {
    if (assignee.type === 'workspace') return true;
    if (assignee.type === 'user') return assignee.user_id === auth.userId;
    return (await this.deps.repo.memberRole(auth.organizationId, auth.userId)) === assignee.role;
  }
}
