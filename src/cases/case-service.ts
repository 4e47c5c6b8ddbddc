import { DomainError } from '../errors.js';
import { assertWorkspaceGrant, listScope, type ListRequest } from '../auth/access.js';
import type { KeyAuthentication } from '../auth/key-authentication.js';
import type { AuthContext } from '../domain/auth-context.js';
import type { Grant } from '../domain/grants.js';
import type { Config } from '../config/config.js';
import type { Logger } from '../logging/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import { indexGraph } from '../domain/case-graph.js';
import {
  isTerminal,
  type CaseStatus as CaseStatusName,
  type CaseProgress,
  type CaseResults,
  type FinalizeCaseInput,
  type NodeLog,
  type NodeRecord,
  type RecordedEnd,
} from '../domain/cases.js';
import type { RunnableVersion, WorkflowGraph } from '../domain/graph.js';
import { taskEventMessage, type WaitingTask } from '../domain/human-tasks.js';
import { handlerClassName } from '../domain/vocabulary.js';
import type { FileService } from '../files/file-service.js';
import type { Outbound } from '../net/outbound.js';
import { checkTenantUrl } from '../net/url-check.js';
import type { CaseRepo } from '../store/case-repo.js';
import type { TaskRepo } from '../store/task-repo.js';
import type { NewDelivery } from '../store/callback-repo.js';
import type { CaseRecord, CaseSummary } from '../domain/case-records.js';
import type { Page } from '../domain/page.js';
import { temporalUiLink, type TemporalHandle } from '../temporal/connection.js';
import type { WorkflowService } from '../definitions/workflow-service.js';
import { validateCaseInputs } from './case-inputs.js';
import { assertCaseInputsWithinLimit } from './payload-limits.js';
import type { EngineHealth } from '../temporal/engine-health.js';
import { caseWorkflowId } from '../temporal/contracts/case-run.js';
import type { CaseRunGateway } from '../temporal/gateways/case-runs.js';
import { callWorkflowKind, type CallWorkflowProcess } from '../domain/node-kinds/call-workflow.js';
import { processSchemaOf } from '../domain/node-kinds/process-schema.js';
import type { ChildCaseRequest, ChildCaseStart, UnstartedChildCase } from '../temporal/contracts/child-case.js';
import type { CreatorCheck } from '../temporal/contracts/case-run.js';
import type { SubscriptionService } from '../subscriptions/subscription-service.js';
import type { ExecuteBody, InitiateBody } from './schemas.js';
import { statsWindow, workflowStats, type CaseStats, type CaseStatsRequest } from './case-stats.js';
import type { ReusePlan } from './rerun-plan.js';
import { CaseStarts, engineDown, type CaseStartsDeps } from './case-starts.js';
import type { CaseAdmission } from './admission/case-admission.js';
import type { CaseEnds } from './case-ends.js';

export interface CaseServiceDeps {
  config: Config;
  logger: Logger;
  temporal: TemporalHandle;
  repo: CaseRepo;
  workflows: WorkflowService;
  files: FileService;
  /** The outbound policy a callbackUrl must pass at execute. */
  outbound: Outbound;
  metrics: Pick<Metrics, 'caseStarted' | 'caseFinished' | 'nodeFinished'>;
  /** What the process knows of the engine: an execute while it is known down is refused before anything changes. */
  engine: Pick<EngineHealth, 'isUp' | 'markDown'>;
  /** The cases' runs in Temporal. */
  runs: CaseRunGateway;
  /** Concurrency caps: admission of accepted cases, and cancelling a queued one. */
  admission: CaseStartsDeps['admission'] & Pick<CaseAdmission, 'cancelQueued'>;
  /** The history of the case's human tasks, shown in its audit. */
  taskHistory: Pick<TaskRepo, 'caseEvents'>;
  /** What a case's end owes the workspace's event subscribers. */
  events: Pick<SubscriptionService, 'subscribersOf' | 'deliveriesTo' | 'dispatch' | 'dispatchUnstarted'>;
  /** The creator's key as it stands now, for cases that start after the request that asked for them. */
  authentication: Pick<KeyAuthentication, 'refusal'>;
  /** Who in this process waits on a case's end (sync hook deliveries): told once it is committed. */
  ends: Pick<CaseEnds, 'ended'>;
}

/** A hook's delivery starting a case: the hook, and the version it resolved for the delivery. */
export interface HookOrigin {
  hookId: string;
  version: RunnableVersion;
}

/** A case's status: the record, the nodes running now (first is the current one), the run's Temporal UI page. */
export interface CaseStatus {
  record: CaseRecord;
  /** The cases that rerun this one, oldest first. */
  reruns: string[];
  running: Array<{ id: string; name: string }>;
  /** The human tasks the case waits on now. */
  waiting: WaitingTask[];
  temporalUiUrl: string | null;
}

/** A case's per-node audit: every node's record and where each stands. */
export interface CaseAudit {
  record: CaseRecord;
  nodes: NodeRecord[];
  lists: Pick<CaseProgress, 'executed' | 'failed' | 'running' | 'remaining'>;
}

/** A page of the case list: filters on top of what the key may read. */
export interface CaseListRequest extends ListRequest {
  workflowId?: string;
  status?: CaseStatusName;
  /** Created at or after (ISO time with an offset). */
  from?: string;
  /** Created before (ISO time with an offset). */
  to?: string;
}

/** What a schedule fires: checked at the schedule's creation and change, and again at each firing. */
export interface ScheduledCaseRequest {
  workflowId: string;
  workflowVersionId?: string | null;
  title?: string | null;
  inputs: Record<string, unknown>;
  callbackUrl?: string | null;
  /** Where the inputs and the callbackUrl were sent, for the 400's field names. */
  prefix: string;
  callbackField: string;
}

const CANCEL_WAIT_MS = 10_000;

/**
 * Cases (and jobs, their deprecated name): initiation, execution, status,
 * results, audit, cancel. The API routers for /api/v1/case and /job are thin
 * over this, so both paths behave the same.
 */
export class CaseService {
  private readonly repo: CaseRepo;
  private readonly starts: CaseStarts;

  constructor(private readonly deps: CaseServiceDeps) {
    this.repo = deps.repo;
    this.starts = new CaseStarts(deps);
  }

  /**
   * A PENDING case. With `origin`, a hook's delivery asks for it (docs/webhook-triggers.md) and runs the
   * version the delivery resolved and mapped its inputs against: not read (and its graph parsed) a second time.
   */
  async initiate(auth: AuthContext, body: InitiateBody, origin?: HookOrigin): Promise<CaseRecord> {
    const listed = body.workspaces === undefined ? undefined : this.parseWorkspaces(body.workspaces);
    const version =
      origin?.version ??
      (await this.deps.workflows.resolveForRun(
        auth.organizationId,
        { workflowId: body.workflowId, referenceEntityId: body.referenceEntityId },
        { versionId: body.workflowVersionId, versionNumber: body.workflowVersionNumber },
      ));
    assertWorkspaceGrant(auth, { id: version.workspaceId, organizationId: version.organizationId }, 'case:full');
    if (listed && !listed.includes(version.workspaceId)) {
      throw DomainError.forbidden('The workflow belongs to none of the workspaces given in `workspaces`');
    }
    const checked = validateCaseInputs(version.graph, body.initialInput, {
      partial: true,
      prefix: 'body.initialInput',
    });
    if (checked.problems.length > 0) throw DomainError.invalidFields(checked.problems);
    assertCaseInputsWithinLimit(checked.inputs, this.deps.config.cases.maxInputBytes, 'body.initialInput');
    // The version's fields spread last: a literal that starts with a spread is slow on Node 20 (store/case-repo.ts, toCase).
    return this.repo.create({
      title: body.title,
      description: body.description,
      refUserId: body.refUserId,
      source: body.source,
      webAppId: body.webAppId,
      hookId: origin?.hookId,
      workspaces: body.workspaces,
      initialInput: checked.inputs,
      createdByKeyId: auth.keyId,
      createdByUserId: auth.userId,
      ...versionFields(version),
    });
  }

  /** The ids of a `workspaces` list, which the body schema has checked to be UUIDs. */
  private parseWorkspaces(value: string): string[] {
    return value
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  }

  /** Cases newest first in the workspaces the key reads with Case: Read (403 without it anywhere). */
  async list(auth: AuthContext, request: CaseListRequest): Promise<Page<CaseSummary>> {
    const scope = listScope(auth, 'case:read', request);
    if (!scope) return { items: [], nextCursor: null };
    // Stored times are UTC ISO strings: compare like with like.
    const utc = (time: string | undefined) => (time === undefined ? undefined : new Date(time).toISOString());
    return this.repo.list({
      ...scope,
      workflowId: request.workflowId,
      status: request.status,
      createdFrom: utc(request.from),
      createdBefore: utc(request.to),
    });
  }

  /**
   * The caller's own case figures per workflow: counts by status and run times of the cases created
   * in the window, in the workspaces the key reads with Case: Read (403 without it anywhere); a
   * workspace or workflow it does not reach counts nothing. What /metrics no longer labels by workflow.
   */
  async stats(auth: AuthContext, request: CaseStatsRequest): Promise<CaseStats> {
    const window = statsWindow(request);
    const scope = listScope(auth, 'case:read', { workspaceId: request.workspaceId, limit: 0 });
    if (!scope) return { ...window, workflows: [] };
    const rows = await this.repo.stats({
      organizationId: scope.organizationId,
      workspaceIds: scope.workspaceIds,
      workflowId: request.workflowId,
      createdFrom: window.from,
      createdBefore: window.to,
    });
    return { ...window, workflows: workflowStats(rows) };
  }

  /** A case of the caller's organization (404 otherwise) that the key reaches with the grant (403). */
  async load(auth: AuthContext, caseId: string, grant: Grant): Promise<CaseRecord> {
    const record = await this.repo.find(caseId);
    if (!record || record.organizationId !== auth.organizationId)
      throw DomainError.notFound(`Case ${caseId} does not exist`);
    assertWorkspaceGrant(auth, { id: record.workspaceId, organizationId: record.organizationId }, grant);
    return record;
  }

  /**
   * What a rerun from the failed node of `original` reuses on `graph`: its
   * completed nodes' recorded outputs, and the nodes that cannot be reused.
   */
  reusePlan(original: CaseRecord, graph: WorkflowGraph): Promise<ReusePlan> {
    return this.starts.reusePlan(original, graph);
  }

  /** A scheduled case accepted for its run, and what its run starts with (CaseStarts.acceptScheduled). */
  acceptScheduled(caseId: string, callbackUrl: string | undefined): ReturnType<CaseStarts['acceptScheduled']> {
    return this.starts.acceptScheduled(caseId, callbackUrl);
  }

  /** Starts the runs of queued cases that free slots let in (CaseStarts.dispatchQueued); how many. */
  dispatchQueued(organizationId?: string): Promise<number> {
    return this.starts.dispatchQueued(organizationId);
  }

  /** Starts the runs a crash left unstarted (CaseStarts.resumeUnstarted); how many. */
  resumeUnstarted(olderThanMs: number): Promise<number> {
    return this.starts.resumeUnstarted(olderThanMs);
  }

  async execute(
    auth: AuthContext,
    caseId: string,
    body: ExecuteBody,
  ): Promise<{ record: CaseRecord; temporalUiUrl: string | null }> {
    const record = await this.load(auth, caseId, 'case:full');
    if (record.status !== 'PENDING')
      throw DomainError.conflict(`Case ${caseId} was already executed (status ${record.status})`, {
        status: record.status,
      });
    if (body.jobPayloadSchema !== undefined && body.inputs !== undefined) {
      throw DomainError.badRequest('Send the inputs either as jobPayloadSchema or as inputs, not both');
    }
    const supplied: Record<string, unknown> = { ...record.initialInput };
    if (body.inputs) Object.assign(supplied, body.inputs);
    for (const [name, entry] of Object.entries(body.jobPayloadSchema ?? {})) {
      const variableName = typeof entry.variable_name === 'string' ? entry.variable_name : name;
      if (Object.hasOwn(entry, 'value')) supplied[variableName] = entry.value;
    }
    const version = await this.starts.version(record);
    const prefix = body.jobPayloadSchema !== undefined ? 'body.jobPayloadSchema' : 'body.inputs';
    const checked = validateCaseInputs(version.graph, supplied, { partial: false, prefix });
    if (checked.problems.length > 0) throw DomainError.invalidFields(checked.problems);
    assertCaseInputsWithinLimit(checked.inputs, this.deps.config.cases.maxInputBytes, prefix);
    await this.checkFiles(
      auth,
      { organizationId: record.organizationId, workspaceId: record.workspaceId, userId: record.createdByUserId },
      checked.files,
    );
    if (body.callbackUrl !== undefined) await checkTenantUrl(this.deps.outbound, body.callbackUrl, 'body.callbackUrl');
    const startDelayMs = body.startAt === undefined ? undefined : this.startDelayMs(body.startAt);
    if (!this.deps.engine.isUp()) throw engineDown(caseId);
    return this.starts.launch(record, version, {
      inputs: checked.inputs,
      callbackUrl: body.callbackUrl,
      timeoutMs: body.timeoutMs,
      startAt: body.startAt,
      startDelayMs,
    });
  }

  /** How long a delayed start waits: 400 for a time not in the future or beyond cases.maxStartDelayMs. */
  private startDelayMs(startAt: string): number {
    const delayMs = Date.parse(startAt) - Date.now();
    const maxMs = this.deps.config.cases.maxStartDelayMs;
    if (delayMs <= 0) throw DomainError.invalidFields([{ field: 'body.startAt', message: 'must be in the future' }]);
    if (delayMs > maxMs)
      throw DomainError.invalidFields([
        { field: 'body.startAt', message: `at most ${maxMs} ms ahead (cases.maxStartDelayMs)` },
      ]);
    return delayMs;
  }

  /**
   * Checks what a schedule will fire as the API checks an initiate and an execute: the version
   * (pinned, or the latest active one), every input (complete, typed, within the size limit), the
   * files the inputs name, the callbackUrl. Throws the DomainError a request would get.
   */
  async checkScheduledCase(
    auth: AuthContext,
    request: ScheduledCaseRequest,
  ): Promise<{ version: RunnableVersion; inputs: Record<string, unknown> }> {
    const version = await this.deps.workflows.resolveForRun(
      auth.organizationId,
      { workflowId: request.workflowId },
      { versionId: request.workflowVersionId ?? undefined },
    );
    assertWorkspaceGrant(auth, { id: version.workspaceId, organizationId: version.organizationId }, 'case:full');
    const checked = validateCaseInputs(version.graph, request.inputs, { partial: false, prefix: request.prefix });
    if (checked.problems.length > 0) throw DomainError.invalidFields(checked.problems);
    assertCaseInputsWithinLimit(checked.inputs, this.deps.config.cases.maxInputBytes, request.prefix);
    const scope = { organizationId: version.organizationId, workspaceId: version.workspaceId, userId: auth.userId };
    await this.checkFiles(auth, scope, checked.files);
    if (request.callbackUrl) await checkTenantUrl(this.deps.outbound, request.callbackUrl, request.callbackField);
    return { version, inputs: checked.inputs };
  }

  /** A schedule's firing: the case, created PENDING with `source: scheduled` after the checks of checkScheduledCase. */
  async createScheduled(
    auth: AuthContext,
    request: ScheduledCaseRequest & { scheduleId: string },
  ): Promise<CaseRecord> {
    const { version, inputs } = await this.checkScheduledCase(auth, request);
    return this.repo.create({
      ...versionFields(version),
      title: request.title ?? undefined,
      source: 'scheduled',
      scheduleId: request.scheduleId,
      initialInput: inputs,
      createdByKeyId: auth.keyId,
      createdByUserId: auth.userId,
    });
  }

  /**
   * Why the key that created a case may no longer start it (revoked, expired, its user gone, or no
   * longer holding Case: Full in the case's workspace), or null. Asked where a case starts after the
   * request that asked for it: a delayed start or a queued case as its run begins, a call_workflow
   * child before it is written (whose creator is its parent's).
   */
  async creatorRefusal(check: CreatorCheck): Promise<string | null> {
    const { caseId, organizationId, workspaceId, keyId } = check;
    return this.deps.authentication.refusal(keyId, `case ${caseId}`, { id: workspaceId, organizationId }, 'case:full');
  }

  /** Links a scheduled case's run once the firing workflow started it. */
  async linkRun(caseId: string, runId: string): Promise<void> {
    await this.repo.setRunId(caseId, runId);
  }

  /**
   * A call_workflow node's child case, for the parent's run to start as its Temporal child: the
   * callee resolved in the parent's workspace (pinned version or latest active), the node's inputs
   * validated as an execute's are, the row written RUNNING with the parent's case and node. A
   * retried call (same child id) answers from the row already written. Refusals are DomainErrors
   * (the activity fails the node with their message): too deep, unknown callee (another
   * workspace's or organization's reads alike), no active version, inputs that do not fit.
   */
  async startChild(request: ChildCaseRequest): Promise<ChildCaseStart> {
    const record = (await this.repo.find(request.childCaseId)) ?? (await this.createChild(request));
    if (record.parent?.caseId !== request.parent.caseId)
      throw new Error(`case ${record.id} is not a child of case ${request.parent.caseId}`);
    const version = await this.starts.version(record);
    const run = { inputs: record.inputs ?? {}, deadlineMs: record.deadlineMs ?? request.remainingMs };
    const { tags, ...labels } = this.starts.runLabels(record, version);
    return {
      input: { ...this.starts.runInput(record, version, run, undefined), callDepth: request.parent.callDepth + 1 },
      ...labels,
      ...(this.deps.temporal.searchAttributes ? { tags } : {}),
    };
  }

  private async createChild(request: ChildCaseRequest): Promise<CaseRecord> {
    const { parent } = request;
    const from = await this.repo.find(parent.caseId);
    if (!from) throw new Error(`parent case ${parent.caseId} is missing`);
    // The child starts now, maybe long after its parent: as the parent's creator, whose key must still be good.
    const refusal = await this.creatorRefusal({ ...parent, keyId: from.createdByKeyId });
    if (refusal) throw DomainError.forbidden(refusal);
    const maxDepth = this.deps.config.cases.maxCallDepth;
    if (parent.callDepth >= maxDepth)
      throw DomainError.badRequest(
        `Sub-workflow cases may nest ${maxDepth} deep (cases.maxCallDepth); this call would be ${parent.callDepth + 1} deep`,
      );
    const parsed = processSchemaOf(callWorkflowKind).safeParse(request.process);
    if (!parsed.success) throw DomainError.badRequest(`call_workflow process is invalid: ${parsed.error.message}`);
    const process = parsed.data as CallWorkflowProcess;
    const callee = await this.deps.workflows.resolveForRun(
      parent.organizationId,
      { workflowId: process.workflow_id },
      { versionNumber: process.version_number },
    );
    // Another workspace's workflow reads as unknown, as another organization's does.
    if (callee.workspaceId !== parent.workspaceId)
      throw DomainError.notFound(`Workflow ${process.workflow_id} does not exist`);
    const checked = validateCaseInputs(callee.graph, request.inputs, { partial: false, prefix: 'inputs' });
    const first = checked.problems[0];
    if (first)
      throw DomainError.invalidFields(checked.problems, {
        message: `The node's inputs do not fit workflow ${callee.name}: ${first.field}: ${first.message}`,
      });
    assertCaseInputsWithinLimit(checked.inputs, this.deps.config.cases.maxInputBytes, 'inputs');
    const { maxCallCases } = this.deps.config.cases;
    const written = await this.repo.createChild(
      request.childCaseId,
      {
        organizationId: callee.organizationId,
        workspaceId: callee.workspaceId,
        workflowId: callee.workflowId,
        entityId: callee.entityId,
        workflowVersionId: callee.versionId,
        workflowVersionNumber: callee.versionNumber,
        title: `${from.title ?? `Case ${from.id}`} › ${callee.name}`,
        source: from.source,
        initialInput: {},
        createdByKeyId: from.createdByKeyId,
        createdByUserId: from.createdByUserId,
      },
      { caseId: parent.caseId, nodeId: parent.nodeId },
      {
        inputs: checked.inputs,
        deadlineMs: Math.max(1, request.remainingMs),
        temporalWorkflowId: caseWorkflowId(request.childCaseId),
      },
      maxCallCases,
    );
    // Calls fan out (n nodes calling n more start n + n² cases) and never wait for a slot: the tree is bounded.
    if (written === 'full')
      throw DomainError.badRequest(
        `A case may start at most ${maxCallCases} sub-workflow cases through its calls, at any depth (cases.maxCallCases); this call would start one more`,
      );
    const created = await this.repo.find(request.childCaseId);
    if (!created) throw new Error(`child case ${request.childCaseId} was not written`);
    // Counted like any started case (its end is counted by finalize); a retried write finds the row and ends earlier.
    this.deps.metrics.caseStarted();
    return created;
  }

  /** A child case whose run never started (its parent ended first, or the start failed) ends with it. */
  async endUnstartedChild(child: UnstartedChildCase): Promise<void> {
    await this.repo.endUnstarted(child.childCaseId, child.status, { message: child.message });
  }

  private async checkFiles(
    auth: AuthContext,
    caseScope: { organizationId: string; workspaceId: string; userId: string },
    files: Array<{ field: string; url: string; allowedTypes: string[] }>,
  ): Promise<void> {
    const problems: Array<{ field: string; message: string; code: string }> = [];
    for (const file of files) {
      const problem = await this.deps.files.checkCaseFileInput(auth, file.url, file.allowedTypes, caseScope);
      if (problem) problems.push({ field: file.field, message: problem.message, code: problem.code });
    }
    const first = problems[0];
    if (!first) return;
    throw DomainError.invalidFields(problems, {
      errorCode:
        first.code === 'unknown_file' ? 'NOT_FOUND' : first.code === 'forbidden' ? 'FORBIDDEN' : 'VALIDATION_ERROR',
    });
  }

  /** Live progress from the workflow (RUNNING cases); undefined when the worker does not answer in time. */
  private async liveProgress(record: CaseRecord): Promise<CaseProgress | undefined> {
    try {
      return await this.deps.runs.progress(record.temporalWorkflowId ?? caseWorkflowId(record.id));
    } catch (err) {
      this.deps.logger.warn({ err, caseId: record.id }, 'case progress query failed');
      return undefined;
    }
  }

  async status(auth: AuthContext, caseId: string): Promise<CaseStatus> {
    const record = await this.load(auth, caseId, 'case:read');
    // A delayed start's run has no workflow task before startAt: nothing to ask it yet.
    const waiting = record.startAt !== null && Date.parse(record.startAt) > Date.now();
    const progress = record.status === 'RUNNING' && !waiting ? await this.liveProgress(record) : undefined;
    // The run may have ended between the read and the query.
    const current = progress && isTerminal(progress.status) ? ((await this.repo.find(caseId)) ?? record) : record;
    const running = progress && !isTerminal(current.status) ? progress.running : [];
    const workflowId = current.temporalWorkflowId;
    return {
      record: current,
      reruns: await this.repo.listReruns(caseId),
      running: running.map((id) => ({ id, name: progress?.nodes[id]?.name ?? id })),
      waiting: progress && !isTerminal(current.status) ? (progress.waitingTasks ?? []) : [],
      temporalUiUrl: workflowId
        ? temporalUiLink(this.deps.temporal, workflowId, current.temporalRunId ?? undefined)
        : null,
    };
  }

  /** The case's recorded end, or undefined while it has none. */
  async recordedEnd(caseId: string): Promise<RecordedEnd | undefined> {
    const found = await this.repo.find(caseId);
    if (!found || !isTerminal(found.status)) return undefined;
    return { status: found.status, results: found.results ?? {}, ...(found.error ? { error: found.error } : {}) };
  }

  /**
   * Records a run's end in its case (the worker's last step), with the case's callback delivery when
   * it has one (written in the same transaction); false when the case had already ended (nothing written).
   */
  async finalize(input: FinalizeCaseInput, callback?: NewDelivery): Promise<boolean> {
    const { events } = this.deps;
    const { progress } = input;
    const workspaceId = input.workspaceId ?? (await this.repo.find(input.caseId))?.workspaceId;
    const subscribers = workspaceId ? await events.subscribersOf(workspaceId, input.status) : [];
    // The subscribers' deliveries are written with the end (one transaction), so a crash cannot lose them.
    const finished = await this.repo.finalize(
      input,
      subscribers.length === 0
        ? undefined
        : (ended) =>
            events.deliveriesTo(subscribers, {
              caseId: input.caseId,
              workspaceId: ended.workspaceId,
              workflowId: ended.workflowId,
              status: input.status,
              finishedAt: ended.finishedAt ?? new Date().toISOString(),
              results: progress.results,
              ...(progress.error ? { error: progress.error } : {}),
            }),
      callback,
    );
    this.deps.ends.ended(input.caseId);
    if (!finished) {
      // A retried end (the process died after the commit): start what did not start then.
      await events.dispatchUnstarted(input.caseId);
      return false;
    }
    await events.dispatch(finished.deliveries, finished.organizationId);
    // Its slot is free: the organization's next queued case takes it now rather than at the periodic pass (which
    // also admits a case queued by another process while this end committed).
    if (finished.organizationHasQueued)
      this.starts
        .dispatchQueued(finished.organizationId)
        .catch((err: unknown) =>
          this.deps.logger.warn({ err }, 'queued cases could not be dispatched after a case end'),
        );
    // Counted once: a replayed or retried finalization wrote nothing and ends above.
    const { metrics } = this.deps;
    metrics.caseFinished(input.status, secondsBetween(finished.startedAt, finished.finishedAt));
    for (const node of Object.values(input.progress.nodes)) {
      const seconds = secondsBetween(node.startedAt, node.finishedAt);
      if (seconds !== undefined) metrics.nodeFinished({ kind: node.handlerClass, status: node.status }, seconds);
    }
    return true;
  }

  /** The results of a finished case; undefined while it has not finished. */
  async results(auth: AuthContext, caseId: string): Promise<{ record: CaseRecord; results: CaseResults } | undefined> {
    const record = await this.load(auth, caseId, 'case:read');
    if (!isTerminal(record.status)) return undefined;
    return { record, results: record.results ?? {} };
  }

  /** Every node's record, a human_task node's log with its tasks' history (each decision: who, when, what). */
  async audit(auth: AuthContext, caseId: string): Promise<CaseAudit> {
    const record = await this.load(auth, caseId, 'case:read');
    const audit = await this.nodeAudit(record);
    const events = await this.deps.taskHistory.caseEvents(caseId);
    if (events.length === 0) return audit;
    const nodes = audit.nodes.map((node) => {
      const own = events.filter((e) => e.nodeId === node.nodeId);
      if (own.length === 0) return node;
      const history = own.map((e): NodeLog => ({ level: 'info', message: taskEventMessage(e), at: e.at }));
      return { ...node, logs: [...node.logs, ...history].sort((a, b) => a.at.localeCompare(b.at)) };
    });
    return { ...audit, nodes };
  }

  private async nodeAudit(record: CaseRecord): Promise<CaseAudit> {
    const caseId = record.id;
    const { graph } = await this.starts.version(record);
    if (isTerminal(record.status)) {
      const nodes = await this.repo.listNodes(caseId, (id) => graph.nodes[id]?.name ?? id);
      // A case cancelled before it ran has no node records: every node then shows as not executed.
      const byId = new Map(nodes.map((n) => [n.nodeId, n]));
      const all = Object.values(graph.nodes).map((n) => byId.get(n.id) ?? blankNode(graph, n.id, 'not_executed'));
      // A rerun's reused node did not run: it is completed, not executed.
      const ran = nodes.filter((n) => (n.status === 'completed' && !n.reused) || n.status === 'failed');
      const executed = ran.map((n) => n.nodeId);
      const failed = nodes.filter((n) => n.status === 'failed').map((n) => n.nodeId);
      return { record, nodes: all, lists: { executed, failed, running: [], remaining: [] } };
    }
    const progress = record.status === 'RUNNING' ? await this.liveProgress(record) : undefined;
    if (progress) return { record, nodes: Object.values(progress.nodes), lists: progress };
    return {
      record,
      nodes: Object.keys(graph.nodes).map((id) => blankNode(graph, id, 'pending')),
      lists: { executed: [], failed: [], running: [], remaining: indexGraph(graph).order },
    };
  }

  async cancel(auth: AuthContext, caseId: string): Promise<CaseRecord> {
    const record = await this.load(auth, caseId, 'case:full');
    if (isTerminal(record.status))
      throw DomainError.conflict(`Case ${caseId} has already ended (status ${record.status})`, {
        status: record.status,
      });
    if (record.status === 'PENDING' && (await this.repo.cancelPending(caseId)))
      return (await this.repo.find(caseId)) ?? record;
    // A queued case has no run yet: it leaves its queue (unless a slot took it meanwhile, then its run is cancelled).
    if (record.status === 'QUEUED' && (await this.deps.admission.cancelQueued(caseId)))
      return (await this.repo.find(caseId)) ?? record;
    // A run that closed without writing its row (terminated, store down) or no longer exists cannot be cancelled.
    if (!(await this.deps.runs.cancel(record.temporalWorkflowId ?? caseWorkflowId(caseId))))
      throw DomainError.conflict(`Case ${caseId} has no running run to cancel`, { status: record.status });
    // The workflow records CANCELLED itself; wait briefly so the answer usually shows it.
    const until = Date.now() + CANCEL_WAIT_MS;
    let current = record;
    while (Date.now() < until) {
      current = (await this.repo.find(caseId)) ?? current;
      if (isTerminal(current.status)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    return current;
  }
}

/** The version a case runs, as its row records it. */
function versionFields(version: RunnableVersion) {
  return {
    organizationId: version.organizationId,
    workspaceId: version.workspaceId,
    workflowId: version.workflowId,
    entityId: version.entityId,
    workflowVersionId: version.versionId,
    workflowVersionNumber: version.versionNumber,
  };
}

function secondsBetween(start: string | null | undefined, end: string | null | undefined): number | undefined {
  if (!start || !end) return undefined;
  return Math.max(0, Date.parse(end) - Date.parse(start)) / 1000;
}

function blankNode(graph: WorkflowGraph, id: string, status: NodeRecord['status']): NodeRecord {
  const node = graph.nodes[id];
  return {
    nodeId: id,
    name: node?.name ?? id,
    handlerClass: node ? handlerClassName(node) : '',
    status,
    logs: [],
    attempts: 0,
  };
}
