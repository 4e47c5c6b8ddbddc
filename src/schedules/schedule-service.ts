import { assertWorkspaceGrant, listScope, type ListRequest } from '../auth/access.js';
import { actingKeyAfter, type InertFields } from '../auth/acting-key.js';
import type { AuthContext } from '../domain/auth-context.js';
import type { Grant } from '../domain/grants.js';
import type { CaseService, ScheduledCaseRequest } from '../cases/case-service.js';
import type { KeyAuthentication } from '../auth/key-authentication.js';
import type { Config } from '../config/config.js';
import { DomainError, type FieldProblem } from '../errors.js';
import type { Logger } from '../logging/logger.js';
import type { Page } from '../domain/page.js';
import type { FiringRecord, ScheduleRecord } from '../domain/schedules.js';
import type { ScheduleChanges, ScheduleRepo } from '../store/schedule-repo.js';
import type { WorkflowRepo } from '../store/workflow-repo.js';
import type { OpenedFiring, OpenFiringInput } from '../temporal/contracts/scheduled-case.js';
import type { ScheduleGateway, ScheduleState } from '../temporal/gateways/schedules.js';
import { runTags } from '../temporal/contracts/search-attributes.js';
import { isTemporalUnavailable } from '../temporal/unavailable.js';
import type { BackfillBody, CreateScheduleBody, UpdateScheduleBody } from './schemas.js';
import { checkedTiming, firingsBetween, timingRequest } from './timing.js';

export interface ScheduleServiceDeps {
  config: Pick<Config, 'schedules' | 'temporal'>;
  logger: Logger;
  repo: ScheduleRepo;
  workflows: Pick<WorkflowRepo, 'findWorkflowByIdOrEntityId'>;
  cases: CaseService;
  /** Who a firing acts as: the schedule's creating key, checked again at each firing. */
  authentication: Pick<KeyAuthentication, 'actingFor'>;
  /** The schedules in Temporal. */
  engine: ScheduleGateway;
  /** Runs are tagged with our search attributes (temporal.searchAttributes). */
  searchAttributes: boolean;
}

/** A schedule as GET answers it: the record, what Temporal says of it (undefined when it lacks it), its latest firings. */
export interface ScheduleDetails {
  record: ScheduleRecord;
  state: ScheduleState | undefined;
  firings: FiringRecord[];
}

export interface ScheduleListRequest extends ListRequest {
  workflowId?: string;
}

const RECENT_FIRINGS = 20;
const ENGINE_RETRY_AFTER_S = 5;

/** A new title (or none), or pausing, starts nothing (startsNothing): the firings keep acting for whom they did. */
const inert: InertFields<UpdateScheduleBody> = { name: 'title', off: { field: 'paused', value: true } };

/** A DomainError as a failed firing records it: the message and each field at fault. */
function refusal(err: DomainError): string {
  const fields = (err.metadata?.fields ?? []) as FieldProblem[];
  return fields.length > 1
    ? `${err.message} (${fields.map((f) => `${f.field}: ${f.message}`).join('; ')})`
    : err.message;
}

/** What the case service checks of a schedule's cases, from the schedule as it stands. */
function caseRequest(
  schedule: Pick<ScheduleRecord, 'workflowId' | 'workflowVersionId' | 'title' | 'inputs' | 'callbackUrl'>,
): ScheduledCaseRequest {
  return {
    workflowId: schedule.workflowId,
    workflowVersionId: schedule.workflowVersionId,
    title: schedule.title,
    inputs: schedule.inputs,
    callbackUrl: schedule.callbackUrl,
    prefix: 'body.inputs',
    callbackField: 'body.callbackUrl',
  };
}

/**
 * Schedules: each is a row here and a Temporal Schedule (`schedule-<id>`) that starts one
 * `scheduledCase` workflow per firing. The row is written first and the Temporal Schedule second
 * (and deleted in the other order), so a crash between the two leaves a row users see, with
 * `inEngine: false`, and can repair (PATCH creates the missing Temporal Schedule) or delete;
 * never a Temporal Schedule firing cases for a schedule nobody can see.
 */
export class ScheduleService {
  constructor(private readonly deps: ScheduleServiceDeps) {}

  async create(auth: AuthContext, workflowId: string, body: CreateScheduleBody): Promise<ScheduleDetails> {
    const workflow = await this.deps.workflows.findWorkflowByIdOrEntityId(workflowId);
    if (!workflow || workflow.organizationId !== auth.organizationId)
      throw DomainError.notFound(`Workflow ${workflowId} does not exist`);
    const workspace = { id: workflow.workspaceId, organizationId: workflow.organizationId };
    assertWorkspaceGrant(auth, workspace, 'workflow:full');
    assertWorkspaceGrant(auth, workspace, 'case:full');
    const timing = await checkedTiming(body, this.deps.config.schedules.minIntervalSeconds);
    const catchupWindowMs = this.catchupWindowMs(body.catchupWindowSeconds);
    const fire = {
      workflowId: workflow.id,
      workflowVersionId: body.workflowVersionId ?? null,
      title: body.title ?? null,
      inputs: body.inputs,
      callbackUrl: body.callbackUrl ?? null,
    };
    const { inputs } = await this.deps.cases.checkScheduledCase(auth, caseRequest(fire));
    const { maxPerWorkspace } = this.deps.config.schedules;
    const record = await this.deps.repo.create(
      {
        ...fire,
        inputs,
        organizationId: workflow.organizationId,
        workspaceId: workflow.workspaceId,
        timing,
        overlap: body.overlap,
        catchupWindowMs,
        paused: body.paused,
        createdByKeyId: auth.keyId,
        createdByUserId: auth.userId,
      },
      maxPerWorkspace,
    );
    if (record === 'full')
      throw DomainError.limitReached(
        `Workspace ${workflow.workspaceId} holds ${maxPerWorkspace} schedules, the most it may (schedules.maxPerWorkspace): delete one first`,
        { setting: 'schedules.maxPerWorkspace', max: maxPerWorkspace },
      );
    try {
      await this.deps.engine.create(record);
    } catch (err) {
      // Nothing fires without its Temporal Schedule: the row goes too, and the caller may retry.
      await this.deps.repo.delete(record.id);
      throw engineError(err);
    }
    return this.details(record);
  }

  async list(auth: AuthContext, request: ScheduleListRequest): Promise<Page<ScheduleRecord>> {
    const scope = listScope(auth, 'workflow:read', request);
    if (!scope) return { items: [], nextCursor: null };
    return this.deps.repo.list({ ...scope, workflowId: request.workflowId });
  }

  async get(auth: AuthContext, scheduleId: string): Promise<ScheduleDetails> {
    return this.details(await this.load(auth, scheduleId, 'workflow:read'));
  }

  async update(auth: AuthContext, scheduleId: string, body: UpdateScheduleBody): Promise<ScheduleDetails> {
    const current = await this.load(auth, scheduleId, 'workflow:full');
    assertWorkspaceGrant(auth, { id: current.workspaceId, organizationId: current.organizationId }, 'case:full');
    const was = timingRequest(current.timing);
    const mode =
      body.cron !== undefined || body.intervalSeconds !== undefined
        ? { cron: body.cron, intervalSeconds: body.intervalSeconds }
        : { cron: was.cron, intervalSeconds: was.intervalSeconds };
    const timing = await checkedTiming(
      {
        ...mode,
        offsetSeconds: mode.intervalSeconds === undefined ? undefined : nullable(body.offsetSeconds, was.offsetSeconds),
        timeZone: body.timeZone ?? was.timeZone,
        startAt: nullable(body.startAt, was.startAt),
        endAt: nullable(body.endAt, was.endAt),
      },
      this.deps.config.schedules.minIntervalSeconds,
    );
    const fire = {
      workflowId: current.workflowId,
      workflowVersionId: body.workflowVersionId === undefined ? current.workflowVersionId : body.workflowVersionId,
      title: body.title === undefined ? current.title : body.title,
      inputs: body.inputs ?? current.inputs,
      callbackUrl: body.callbackUrl === undefined ? current.callbackUrl : body.callbackUrl,
    };
    const { inputs } = await this.deps.cases.checkScheduledCase(auth, caseRequest(fire));
    const changes: ScheduleChanges = {
      ...fire,
      inputs,
      timing,
      overlap: body.overlap ?? current.overlap,
      catchupWindowMs:
        body.catchupWindowSeconds === undefined
          ? current.catchupWindowMs
          : this.catchupWindowMs(body.catchupWindowSeconds),
      paused: body.paused ?? current.paused,
      // Whoever changes what it fires, with what, when, or resumes it answers for its firings from then on.
      ...actingKeyAfter(auth, body, inert),
    };
    // Temporal first: a failure there changes nothing the caller sees, and the same PATCH may be sent again.
    await this.deps.engine.update({ ...current, ...changes, timing }).catch((err: unknown) => {
      throw engineError(err);
    });
    const updated = await this.deps.repo.update(current.id, changes);
    if (!updated) throw DomainError.notFound(`Schedule ${scheduleId} does not exist`);
    return this.details(updated);
  }

  async delete(auth: AuthContext, scheduleId: string): Promise<void> {
    const record = await this.load(auth, scheduleId, 'workflow:full');
    await this.deps.engine.delete(record.id).catch((err: unknown) => {
      throw engineError(err);
    });
    await this.deps.repo.delete(record.id);
  }

  async pause(auth: AuthContext, scheduleId: string, paused: boolean): Promise<ScheduleDetails> {
    // Pausing stops firings (Workflow: Full); resuming makes cases again, which needs Case: Full as firing does.
    const record = await this.load(auth, scheduleId, paused ? 'workflow:full' : 'case:full');
    const note = `${paused ? 'paused' : 'resumed'} through the API by key ${auth.keyId}`;
    await (paused ? this.deps.engine.pause(record.id, note) : this.deps.engine.unpause(record.id, note)).catch(
      (err: unknown) => {
        throw engineError(err);
      },
    );
    // Resuming is a change that starts cases, as PATCH { paused: false } is: the resuming key answers for them.
    const changes = { paused, ...actingKeyAfter(auth, { paused }, inert) };
    return this.details((await this.deps.repo.update(record.id, changes)) ?? record);
  }

  /** Fires now, even while an earlier firing runs; firing needs Case: Full. */
  async trigger(auth: AuthContext, scheduleId: string): Promise<void> {
    const record = await this.load(auth, scheduleId, 'case:full');
    await this.deps.engine.trigger(record.id).catch((err: unknown) => {
      throw engineError(err);
    });
  }

  /** Fires every time the schedule had in the range, one after another (at most schedules.maxBackfillFirings). */
  async backfill(auth: AuthContext, scheduleId: string, body: BackfillBody): Promise<{ firings: number }> {
    const record = await this.load(auth, scheduleId, 'case:full');
    const start = new Date(body.startAt);
    const end = new Date(body.endAt);
    if (start >= end) throw DomainError.invalidFields([{ field: 'body.endAt', message: 'must be after startAt' }]);
    if (end.getTime() > Date.now())
      throw DomainError.invalidFields([{ field: 'body.endAt', message: 'a backfill covers the past only' }]);
    const cap = this.deps.config.schedules.maxBackfillFirings;
    const firings = await firingsBetween(record.timing, start, end, cap);
    if (firings > cap)
      throw DomainError.invalidFields([
        { field: 'body.startAt', message: `the range holds more than ${cap} firings (schedules.maxBackfillFirings)` },
      ]);
    if (firings === 0)
      throw DomainError.invalidFields([{ field: 'body.startAt', message: 'the schedule has no firing in the range' }]);
    await this.deps.engine.backfill(record.id, start, end).catch((err: unknown) => {
      throw engineError(err);
    });
    return { firings };
  }

  /**
   * A firing (the scheduledCase workflow's first activity): creates the case as the API would and
   * accepts it for its run, or records why it cannot (workflow inactive, inputs no longer valid…).
   * Once per firing workflow: a retried activity finds what its first attempt recorded.
   */
  async openFiring(input: OpenFiringInput): Promise<OpenedFiring> {
    const { repo, cases } = this.deps;
    const schedule = await repo.find(input.scheduleId);
    if (!schedule) {
      // A Temporal Schedule without its row fires for nobody: remove it.
      this.deps.logger.warn({ scheduleId: input.scheduleId }, 'a schedule without its row fired; deleting it');
      await this.deps.engine.delete(input.scheduleId);
      return { firing: 'orphan' };
    }
    const firing = {
      scheduleId: schedule.id,
      temporalWorkflowId: input.firingWorkflowId,
      scheduledAt: input.scheduledAt,
    };
    const existing = await repo.findFiring(input.firingWorkflowId);
    if (existing?.status === 'failed') return { firing: 'failed', error: existing.error ?? '' };
    let caseId = existing?.caseId;
    if (!caseId) {
      try {
        caseId = (
          await cases.createScheduled(await this.firingAuth(schedule), {
            ...caseRequest(schedule),
            scheduleId: schedule.id,
          })
        ).id;
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
        const error = refusal(err);
        await repo.recordFiring({ ...firing, status: 'failed', error });
        this.deps.logger.warn({ scheduleId: schedule.id, error }, 'a schedule firing created no case');
        return { firing: 'failed', error };
      }
      await repo.recordFiring({ ...firing, status: 'started', caseId });
    }
    const started = await cases.acceptScheduled(caseId, schedule.callbackUrl ?? undefined);
    if (!started) return { firing: 'failed', error: `case ${caseId} ended before its run started` };
    if (started === 'QUEUED') return { firing: 'queued', caseId };
    return {
      firing: 'started',
      run: started.input,
      labels: {
        summary: started.labels.summary,
        details: `${started.labels.details} · schedule ${schedule.id}`,
        searchAttributes: runTags(this.deps.searchAttributes, started.labels.tags).typedSearchAttributes ?? [],
      },
      workflowTaskTimeoutMs: this.deps.config.temporal.caseWorkflowTaskTimeoutMs,
    };
  }

  /**
   * Who a firing acts as: the schedule's creator's key as it stands now (a key revoked or expired
   * since, or whose user left, creates nothing), in the schedule's workspace only, with what
   * creating the case there needs: Case: Full, and File: Read for the files its inputs name.
   */
  private firingAuth(schedule: ScheduleRecord): Promise<AuthContext> {
    return this.deps.authentication.actingFor(
      schedule.createdByKeyId,
      `schedule ${schedule.id}`,
      schedule.workspaceId,
      ['case:full', 'file:read'],
    );
  }

  /** A schedule of the caller's organization (404 otherwise, another organization's too) with the grant (403). */
  private async load(auth: AuthContext, scheduleId: string, grant: Grant): Promise<ScheduleRecord> {
    const record = await this.deps.repo.find(scheduleId);
    if (!record || record.organizationId !== auth.organizationId)
      throw DomainError.notFound(`Schedule ${scheduleId} does not exist`);
    assertWorkspaceGrant(auth, { id: record.workspaceId, organizationId: record.organizationId }, grant);
    return record;
  }

  private async details(record: ScheduleRecord): Promise<ScheduleDetails> {
    const [state, firings] = await Promise.all([
      this.deps.engine.describe(record.id).catch((err: unknown) => {
        if (!isTemporalUnavailable(err)) throw err;
        return undefined;
      }),
      this.deps.repo.recentFirings(record.id, RECENT_FIRINGS),
    ]);
    return { record, state, firings };
  }

  private catchupWindowMs(seconds: number): number {
    const max = this.deps.config.schedules.maxCatchupWindowSeconds;
    if (seconds > max)
      throw DomainError.invalidFields([
        { field: 'body.catchupWindowSeconds', message: `at most ${max} (schedules.maxCatchupWindowSeconds)` },
      ]);
    return seconds * 1000;
  }
}

/** A field of a PATCH: null clears it, absent keeps it. */
function nullable<T>(sent: T | null | undefined, current: T | undefined): T | undefined {
  return sent === undefined ? current : (sent ?? undefined);
}

/** An unreachable engine is a 503 the caller may retry; anything else goes on as is. */
function engineError(err: unknown): unknown {
  return isTemporalUnavailable(err)
    ? DomainError.unavailable(
        'The workflow engine is unavailable; nothing was changed: retry after Retry-After',
        ENGINE_RETRY_AFTER_S,
      )
    : err;
}
