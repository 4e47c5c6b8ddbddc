import { setImmediate as afterPendingCallbacks } from 'node:timers/promises';
import { DomainError } from '../errors.js';
import type { Config } from '../config/config.js';
import type { Logger } from '../logging/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import { caseRunRevision } from '../domain/case-run-changes.js';
import type { CaseRunInput } from '../domain/cases.js';
import type { RunnableVersion, WorkflowGraph } from '../domain/graph.js';
import type { CaseRepo } from '../store/case-repo.js';
import type { CaseRecord } from '../domain/case-records.js';
import { temporalUiLink, type TemporalHandle } from '../temporal/connection.js';
import type { WorkflowService } from '../definitions/workflow-service.js';
import { isTemporalUnanswered } from '../temporal/unavailable.js';
import type { EngineHealth } from '../temporal/engine-health.js';
import { caseWorkflowId } from '../temporal/contracts/case-run.js';
import type { CaseRunGateway, CaseRunLabels } from '../temporal/gateways/case-runs.js';
import { planReuse, type ReusePlan } from './rerun-plan.js';
import type { CaseAdmission } from './admission/case-admission.js';

/** What starting cases' runs needs (a subset of the case service's dependencies). */
export interface CaseStartsDeps {
  config: Config;
  logger: Logger;
  temporal: TemporalHandle;
  repo: CaseRepo;
  workflows: WorkflowService;
  metrics: Pick<Metrics, 'caseStarted'>;
  /** What the process knows of the engine: an execute while it is known down is refused before anything changes. */
  engine: Pick<EngineHealth, 'isUp' | 'markDown'>;
  /** The cases' runs in Temporal. */
  runs: CaseRunGateway;
  /** Concurrency caps: whether an accepted case runs now or waits its turn. */
  admission: Pick<CaseAdmission, 'admit' | 'promote' | 'waitingOrganizations'>;
}

/** What a run is started with besides the version: the case's validated inputs, callback and deadline. */
interface RunSettings {
  inputs: Record<string, unknown>;
  callbackUrl?: string;
  deadlineMs: number;
  /** The run begins after the request that asked for it (delayed, queued, resumed): its creator's key is checked again first. */
  recheckCreator?: boolean;
}

/** An execute's checked request: the case's validated inputs, its callback, deadline and delayed start. */
export interface LaunchRequest {
  inputs: Record<string, unknown>;
  callbackUrl?: string;
  timeoutMs?: number;
  startAt?: string;
  startDelayMs?: number;
}

const START_RETRY_AFTER_S = 5;

/** Nothing was sent to the engine (or it showed no run), so the case truly stays PENDING. */
export function engineDown(caseId: string): DomainError {
  return DomainError.unavailable(
    `The workflow engine is unavailable; case ${caseId} was not started and stays PENDING: execute it again after Retry-After`,
    START_RETRY_AFTER_S,
  );
}

/**
 * Starting cases' runs in Temporal: an execute's start (with its recovery when the engine fails
 * mid-way), a scheduled case's acceptance, and the recovery loop that starts runs a crash left
 * unstarted. CaseService holds the requests' rules and hands the start to this.
 */
export class CaseStarts {
  private readonly repo: CaseRepo;

  constructor(private readonly deps: CaseStartsDeps) {
    this.repo = deps.repo;
  }

  /**
   * What a rerun from the failed node of `original` reuses on `graph`: its
   * completed nodes' recorded outputs, and the nodes that cannot be reused.
   */
  async reusePlan(original: CaseRecord, graph: WorkflowGraph): Promise<ReusePlan> {
    const originalGraph = (await this.version(original)).graph;
    const nodes = await this.repo.listNodes(original.id, (id) => originalGraph.nodes[id]?.name ?? id);
    return planReuse(original.id, nodes, graph);
  }

  /** The nodes a rerun from the failed node takes as completed (checked at the rerun request); none otherwise. */
  private async reusedNodes(record: CaseRecord, graph: WorkflowGraph): Promise<CaseRunInput['reused']> {
    if (record.rerunFrom !== 'failed' || record.rerunOf === null) return undefined;
    const original = await this.repo.find(record.rerunOf);
    if (!original) throw new Error(`case ${record.rerunOf}, which case ${record.id} reruns, is missing`);
    return (await this.reusePlan(original, graph)).reused;
  }

  async version(record: CaseRecord): Promise<RunnableVersion> {
    const version = await this.deps.workflows.findRunnableVersion(record.organizationId, record.workflowVersionId);
    if (!version) throw new Error(`workflow version ${record.workflowVersionId} of case ${record.id} is missing`);
    return version;
  }

  /**
   * Accepts a PENDING case for its run (PENDING → RUNNING with its inputs) and starts the run. A
   * start whose outcome is unknown leaves the case RUNNING for the recovery loop; one that surely
   * did not happen puts the case back to PENDING (503 when the engine is away).
   */
  async launch(
    record: CaseRecord,
    version: RunnableVersion,
    request: LaunchRequest,
  ): Promise<{ record: CaseRecord; temporalUiUrl: string | null }> {
    const caseId = record.id;
    const temporalWorkflowId = caseWorkflowId(caseId);
    const deadlineMs =
      request.timeoutMs ?? Math.min(this.deps.config.cases.defaultDeadlineMs, this.deps.config.cases.maxDeadlineMs);
    const admission = await this.deps.admission.admit(record, {
      inputs: request.inputs,
      callbackUrl: request.callbackUrl,
      deadlineMs,
      temporalWorkflowId,
      startAt: request.startAt && new Date(request.startAt).toISOString(),
    });
    if (admission.status === 'NOT_PENDING') throw DomainError.conflict(`Case ${caseId} was already executed`);
    this.startAdmittedLater(admission.others);
    if (admission.status === 'QUEUED') return { record: (await this.repo.find(caseId)) ?? record, temporalUiUrl: null };
    const run = {
      inputs: request.inputs,
      callbackUrl: request.callbackUrl,
      deadlineMs,
      recheckCreator: request.startDelayMs !== undefined,
    };
    let runId: string | null;
    try {
      runId = await this.startRun(record, version, run, request.startDelayMs);
    } catch (err) {
      const unreachable = isTemporalUnanswered(err);
      // Tell the rest of the process now rather than at the probe's next round.
      if (unreachable) this.deps.engine.markDown(String(err));
      const outcome = await this.deps.runs.settle(caseId);
      if (outcome.run === 'started') runId = outcome.runId;
      else if (outcome.run === 'unknown') {
        // The start may have reached the engine: the case stays accepted (RUNNING, its inputs stored) and the
        // recovery loop starts or links its one run once the engine answers. Never reported as not started.
        this.deps.logger.warn({ err, caseId }, 'case start outcome unknown; the recovery loop will settle it');
        runId = null;
      } else {
        // No run exists: the case goes back to PENDING, so a retry (or resumeUnstarted) can start it.
        await this.repo.revertToPending(caseId);
        if (unreachable) throw engineDown(caseId);
        throw err;
      }
    }
    // An eager start (every start without a delay) brings the run's first workflow task back with the answer: the
    // worker's activation for it waits behind this continuation. Let it go first, so the case begins before its
    // row is written and the 202 is sent (both only the caller waits for, and it waits for the callback anyway).
    if (runId !== null && request.startDelayMs === undefined) await afterPendingCallbacks();
    const updated = await this.recordStarted(caseId, runId).catch((err: unknown) => {
      // The run is started: the answer is 202 whatever the store says now (a 503 would tell the caller it was
      // not); the recovery loop links the run id once the store answers again.
      this.deps.logger.warn({ err, caseId, runId }, 'case started but its run id could not be recorded yet');
      return undefined;
    });
    const accepted: CaseRecord = updated ?? {
      ...record,
      status: 'RUNNING',
      inputs: run.inputs,
      callbackUrl: run.callbackUrl ?? null,
      deadlineMs: run.deadlineMs,
      temporalWorkflowId,
      startAt: request.startAt ? new Date(request.startAt).toISOString() : null,
    };
    return {
      record: accepted,
      temporalUiUrl: runId ? temporalUiLink(this.deps.temporal, temporalWorkflowId, runId) : null,
    };
  }

  /** The case row once its run is started, with the run id linked when known. */
  private async recordStarted(caseId: string, runId: string | null): Promise<CaseRecord | undefined> {
    return (runId ? await this.repo.setRunId(caseId, runId) : undefined) ?? (await this.repo.find(caseId));
  }

  /**
   * Starts the case's run, or links the one that exists (a start refused as a duplicate, or one
   * that failed on our side after the server accepted it). Throws when no run can be shown to exist.
   */
  private async startOrLinkRun(record: CaseRecord, version: RunnableVersion, run: RunSettings): Promise<string> {
    // A delayed start resumed late keeps what is left of its delay.
    const leftMs = record.startAt ? Date.parse(record.startAt) - Date.now() : 0;
    try {
      return await this.startRun(record, version, run, leftMs > 0 ? leftMs : undefined);
    } catch (err) {
      const outcome = await this.deps.runs.settle(record.id);
      if (outcome.run === 'started') return outcome.runId;
      throw err;
    }
  }

  /** Starts the case's Temporal run (workflow id `case-<caseId>`), after `startDelayMs` when given; the run id. */
  private async startRun(
    record: CaseRecord,
    version: RunnableVersion,
    run: RunSettings,
    startDelayMs?: number,
  ): Promise<string> {
    const reused = await this.reusedNodes(record, version.graph);
    const input = this.runInput(record, version, run, reused);
    const runId = await this.deps.runs.start(input, this.runLabels(record, version), startDelayMs);
    this.deps.metrics.caseStarted();
    return runId;
  }

  /** What a case's run is started with: the version's graph, the validated inputs, the limits of this code. */
  runInput(
    record: CaseRecord,
    version: RunnableVersion,
    run: RunSettings,
    reused: CaseRunInput['reused'],
  ): CaseRunInput {
    return {
      caseId: record.id,
      organizationId: record.organizationId,
      workspaceId: record.workspaceId,
      graph: version.graph,
      inputs: run.inputs,
      deadlineMs: run.deadlineMs,
      maxParallelNodes: this.deps.config.cases.maxParallelNodes,
      maxWaitMs: this.deps.config.cases.maxWaitMs,
      revision: caseRunRevision,
      ...(run.recheckCreator ? { creatorKeyId: record.createdByKeyId } : {}),
      ...(run.callbackUrl ? { callbackUrl: run.callbackUrl } : {}),
      ...(reused ? { reused } : {}),
    };
  }

  /** How the Temporal UI shows a case's run and what it filters it by. */
  runLabels(record: CaseRecord, version: RunnableVersion): CaseRunLabels {
    const parent = record.parent ? ` · parent case ${record.parent.caseId} node ${record.parent.nodeId}` : '';
    const rerun =
      record.rerunOf === null ? '' : ` · rerun of case ${record.rerunOf} from ${record.rerunFrom ?? 'start'}`;
    return {
      summary: `${version.name} v${version.versionNumber}${record.title ? `: ${record.title}` : ''}`,
      details: `case ${record.id} · workflow ${version.workflowId} · workspace ${record.workspaceId} · source ${record.source}${parent}${rerun}`,
      tags: {
        organizationId: record.organizationId,
        workspaceId: record.workspaceId,
        workflowId: record.workflowId,
        caseStatus: 'RUNNING',
        source: record.source,
        ...(record.rerunOf === null ? {} : { rerunOf: record.rerunOf }),
      },
    };
  }

  /**
   * A scheduled case accepted for its run (PENDING → RUNNING, as execute does), and what its run
   * starts with; the firing workflow starts it as its child. Again for a case already accepted (a
   * retried activity). 'QUEUED' when it waits over a concurrency cap: its run is started when it
   * takes a slot (dispatchQueued), not as the firing's child. Undefined when the case was cancelled
   * or ended before its run started.
   */
  async acceptScheduled(
    caseId: string,
    callbackUrl: string | undefined,
  ): Promise<{ input: CaseRunInput; labels: CaseRunLabels } | 'QUEUED' | undefined> {
    const record = await this.repo.find(caseId);
    if (!record) throw new Error(`scheduled case ${caseId} is missing`);
    const deadlineMs = Math.min(this.deps.config.cases.defaultDeadlineMs, this.deps.config.cases.maxDeadlineMs);
    const admission =
      record.status === 'PENDING'
        ? await this.deps.admission.admit(record, {
            inputs: record.initialInput,
            callbackUrl,
            deadlineMs,
            temporalWorkflowId: caseWorkflowId(caseId),
          })
        : undefined;
    if (admission?.status === 'RUNNING' || admission?.status === 'QUEUED') this.startAdmittedLater(admission.others);
    const accepted = admission?.status === 'RUNNING';
    const current = (await this.repo.find(caseId)) ?? record;
    if (current.status === 'QUEUED') return 'QUEUED';
    if (current.status !== 'RUNNING') return undefined;
    const version = await this.version(current);
    const settings = {
      inputs: current.inputs ?? current.initialInput,
      callbackUrl: current.callbackUrl ?? undefined,
      deadlineMs: current.deadlineMs ?? deadlineMs,
    };
    const reused = await this.reusedNodes(current, version.graph);
    const started = {
      input: this.runInput(current, version, settings, reused),
      labels: this.runLabels(current, version),
    };
    // Counted once, by the attempt that accepted it (a retried activity finds it RUNNING).
    if (accepted) this.deps.metrics.caseStarted();
    return started;
  }

  /**
   * Cases accepted for execution (RUNNING in the store) whose Temporal run was
   * never started, because the process died between the two, are started
   * now; a run that did start is only linked. `olderThanMs` leaves alone the
   * executions still in flight in some API process. Returns how many were
   * resumed.
   */
  async resumeUnstarted(olderThanMs: number): Promise<number> {
    let resumed = 0;
    for (const record of await this.repo.listUnstarted(new Date(Date.now() - olderThanMs).toISOString())) {
      // While the engine is down each start would wait out its timeout: the next pass after it is back does them.
      if (!this.deps.engine.isUp()) break;
      try {
        const runId = await this.startAccepted(record);
        resumed++;
        this.deps.logger.warn({ caseId: record.id, runId }, 'resumed a case whose run had not been started');
      } catch (err) {
        this.deps.logger.error({ err, caseId: record.id }, 'could not resume a case whose run had not been started');
      }
    }
    return resumed;
  }

  /**
   * Starts (or links) the run of a case accepted for it (RUNNING, no run linked): one admitted from
   * its queue or left unstarted by a crash, which begins after the request that asked for it; the run id.
   */
  private async startAccepted(record: CaseRecord): Promise<string> {
    const runId = await this.startOrLinkRun(record, await this.version(record), {
      inputs: record.inputs ?? {},
      callbackUrl: record.callbackUrl ?? undefined,
      deadlineMs: record.deadlineMs ?? this.deps.config.cases.defaultDeadlineMs,
      recheckCreator: true,
    });
    await this.repo.setRunId(record.id, runId);
    return runId;
  }

  /**
   * Gives free slots to queued cases and starts their runs: of one organization (after one of its
   * cases ended), or of every organization with a queue (the periodic pass, which also catches
   * slots freed by a person's wait, a cap raised, or a process that died mid-way). A crash between
   * admitting a case and starting its run leaves it RUNNING without a run: resumeUnstarted starts it.
   */
  async dispatchQueued(organizationId?: string): Promise<number> {
    const organizations =
      organizationId === undefined ? await this.deps.admission.waitingOrganizations() : [organizationId];
    let started = 0;
    for (const organization of organizations) {
      started += await this.startAdmitted(await this.deps.admission.promote(organization));
    }
    return started;
  }

  /** Starts the runs of cases just admitted from their queue; how many started. */
  private async startAdmitted(caseIds: string[]): Promise<number> {
    let started = 0;
    for (const caseId of caseIds) {
      try {
        const record = await this.repo.find(caseId);
        if (record?.status !== 'RUNNING' || record.temporalRunId !== null) continue;
        await this.startAccepted(record);
        started++;
      } catch (err) {
        // The case stays RUNNING without a run: the recovery loop starts it.
        this.deps.logger.error({ err, caseId }, 'could not start an admitted case; the recovery loop will');
      }
    }
    return started;
  }

  /** Starts the runs of queued cases an admission let in with another, without holding up its answer. */
  private startAdmittedLater(caseIds: string[]): void {
    if (caseIds.length > 0) void this.startAdmitted(caseIds);
  }
}
