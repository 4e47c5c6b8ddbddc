import { createHash, randomUUID } from 'node:crypto';
import { assertGrant, listScope } from '../auth/access.js';
import type { AuthContext } from '../domain/auth-context.js';
import type { Grant } from '../domain/grants.js';
import type { KeyAuthentication } from '../auth/key-authentication.js';
import type { Config } from '../config/config.js';
import type { CaseStatus, RerunBatchStatus, RerunFrom, RerunOutcome, RerunVersion } from '../domain/cases.js';
import { DomainError } from '../errors.js';
import type { Logger } from '../logging/logger.js';
import type { CaseRepo } from '../store/case-repo.js';
import type { RerunBatchRecord, RerunBatchRepo, RerunFilter, RerunItem } from '../store/rerun-batch-repo.js';
import { temporalUiLink, type TemporalHandle } from '../temporal/connection.js';
import {
  rerunBatchWorkflowId,
  type RerunStepRequest,
  type RerunStepResult,
} from '../temporal/contracts/rerun-batch.js';
import type { RerunBatchGateway } from '../temporal/gateways/rerun-batches.js';
import type { RerunService } from './rerun-service.js';

/** A batch cannot go on (the key that started it is no longer valid): it ends FAILED with this message. */
export class RerunBatchStopped extends Error {}

/** What a bulk rerun is asked with: the case list's filters, and how each case is rerun. */
export interface RerunBatchRequest {
  filter: { workspaceId?: string; workflowId?: string; status?: CaseStatus; from?: string; to?: string };
  from: RerunFrom;
  version: RerunVersion;
}

/** A batch as it stands: its record, the outcome counts, the first skipped and failed cases with their reasons. */
export interface RerunBatchProgress {
  batch: RerunBatchRecord;
  counts: Record<RerunOutcome, number>;
  skipped: RerunItem[];
  failed: RerunItem[];
  temporalUiUrl: string | null;
}

export interface RerunBatchServiceDeps {
  config: Config;
  logger: Logger;
  temporal: Pick<TemporalHandle, 'tenantUiUrl' | 'namespace'>;
  repo: RerunBatchRepo;
  cases: CaseRepo;
  reruns: RerunService;
  authentication: Pick<KeyAuthentication, 'resume'>;
  runs: RerunBatchGateway;
}

/** Skipped and failed cases a progress answer lists (the counts cover them all). */
const LISTED_ITEMS = 100;
const CANCEL_WAIT_MS = 10_000;

/**
 * The id of the rerun of `caseId` in `batchId`: the same every time (a
 * name-based UUID, version 5 layout), so a step tried twice finds the rerun
 * it created instead of starting another.
 */
export function batchRerunId(batchId: string, caseId: string): string {
  const h = createHash('sha256').update(`${batchId}:${caseId}`).digest('hex');
  const variant = ((Number.parseInt(h.charAt(16), 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

const utc = (time: string | undefined) => (time === undefined ? undefined : new Date(time).toISOString());

/**
 * Bulk reruns: a batch fixes the cases a filter matches when it is created
 * (those created before it, so its own reruns never match) and a Temporal
 * workflow (workflows/rerun-batch.ts) works through them at a bounded rate,
 * rerunning each as the key that created the batch. Progress is in the
 * store, one outcome per case, so it survives restarts.
 */
export class RerunBatchService {
  constructor(private readonly deps: RerunBatchServiceDeps) {}

  async create(auth: AuthContext, request: RerunBatchRequest): Promise<RerunBatchProgress> {
    const scope = listScope(auth, 'case:full', { workspaceId: request.filter.workspaceId, limit: 0 });
    if (!scope) throw DomainError.forbidden('This API key reaches no workspace of the filter with Case: Full');
    const now = new Date().toISOString();
    const to = utc(request.filter.to);
    const filter: RerunFilter = {
      ...(request.filter.workspaceId === undefined ? {} : { workspaceId: request.filter.workspaceId }),
      ...(request.filter.workflowId === undefined ? {} : { workflowId: request.filter.workflowId }),
      ...(request.filter.status === undefined ? {} : { status: request.filter.status }),
      ...(request.filter.from === undefined ? {} : { createdFrom: utc(request.filter.from) }),
      createdBefore: to !== undefined && to < now ? to : now,
    };
    const matched = await this.deps.cases.count({
      ...filter,
      organizationId: scope.organizationId,
      workspaceIds: scope.workspaceIds,
    });
    const max = this.deps.config.cases.rerunBatchMaxCases;
    if (matched > max)
      throw DomainError.badRequest(
        `The filter matches ${matched} cases; a bulk rerun takes at most ${max} (cases.rerunBatchMaxCases): narrow it`,
        { matched, max },
      );
    const id = randomUUID();
    const maxRunning = this.deps.config.cases.maxRunningRerunBatches;
    const batch = await this.deps.repo.create(
      {
        id,
        organizationId: scope.organizationId,
        workspaceIds: scope.workspaceIds ?? null,
        filter,
        from: request.from,
        version: request.version,
        matched,
        createdByKeyId: auth.keyId,
        temporalWorkflowId: rerunBatchWorkflowId(id),
      },
      maxRunning,
    );
    // Each running batch holds a workflow and reruns cases at its own rate: an organization runs a few at once.
    if (batch === 'full')
      throw DomainError.limitReached(
        `Organization ${scope.organizationId} has ${maxRunning} bulk reruns running, the most it may (cases.maxRunningRerunBatches): wait for one to end or cancel one`,
        { setting: 'cases.maxRunningRerunBatches', max: maxRunning },
      );
    try {
      await this.deps.runs.start(
        { batchId: id, perSecond: this.deps.config.cases.rerunBatchPerSecond },
        {
          summary: `Rerun of ${matched} cases from ${request.from} on the ${request.version} version`,
          details: `batch ${id} · organization ${scope.organizationId} · filter ${JSON.stringify(filter)}`,
          tags: {
            organizationId: scope.organizationId,
            ...(filter.workspaceId === undefined ? {} : { workspaceId: filter.workspaceId }),
            ...(filter.workflowId === undefined ? {} : { workflowId: filter.workflowId }),
          },
        },
      );
    } catch (err) {
      await this.deps.repo.finish(id, 'FAILED', 'the batch could not be started');
      throw err;
    }
    return this.progressOf(batch);
  }

  async progress(auth: AuthContext, batchId: string): Promise<RerunBatchProgress> {
    return this.progressOf(await this.load(auth, batchId, 'case:read'));
  }

  /** Stops the batch between two cases (reruns already started go on); 409 once it has ended. */
  async cancel(auth: AuthContext, batchId: string): Promise<RerunBatchProgress> {
    const batch = await this.load(auth, batchId, 'case:full');
    if (batch.status !== 'RUNNING')
      throw DomainError.conflict(`Rerun batch ${batchId} has already ended (status ${batch.status})`, {
        status: batch.status,
      });
    // A batch whose run is gone (terminated by an operator) is ended here; a running one records CANCELLED itself.
    if (!(await this.deps.runs.cancel(batchId))) await this.deps.repo.finish(batchId, 'CANCELLED');
    const until = Date.now() + CANCEL_WAIT_MS;
    let current = batch;
    while (current.status === 'RUNNING' && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 100));
      current = (await this.deps.repo.find(batchId)) ?? current;
    }
    return this.progressOf(current);
  }

  /** One step of the batch's workflow: the next cases after `after`, each rerun or skipped, and recorded. */
  async step(request: RerunStepRequest): Promise<RerunStepResult> {
    const batch = await this.deps.repo.find(request.batchId);
    if (!batch) throw new Error(`rerun batch ${request.batchId} is missing`);
    if (batch.status !== 'RUNNING') return { processed: 0 };
    const auth = await this.deps.authentication.resume(batch.createdByKeyId).catch((err: unknown) => {
      if (err instanceof DomainError)
        throw new RerunBatchStopped(`The key that started the batch can no longer be used: ${err.message}`);
      throw err;
    });
    const page = await this.deps.cases.list({
      ...batch.filter,
      organizationId: batch.organizationId,
      workspaceIds: batch.workspaceIds ?? undefined,
      after: request.after,
      limit: request.limit,
    });
    const recorded = await this.deps.repo.recorded(
      batch.id,
      page.items.map((c) => c.id),
    );
    let processed = 0;
    for (const original of page.items) {
      // A cancelled batch stops here, even while this step (which Temporal does not interrupt) runs.
      if ((await this.deps.repo.find(batch.id))?.status !== 'RUNNING') return { processed };
      if (!recorded.has(original.id)) await this.rerunOne(auth, batch, original.id);
      processed++;
    }
    const last = page.items.at(-1);
    return { processed, ...(last ? { last: { createdAt: last.createdAt, id: last.id } } : {}) };
  }

  /** Ends the batch (the workflow's last step); a batch already ended stays as it is. */
  async end(batchId: string, status: Exclude<RerunBatchStatus, 'RUNNING'>, error?: string): Promise<void> {
    await this.deps.repo.finish(batchId, status, error);
  }

  /**
   * Reruns one case and records how it went: started; skipped when the rerun
   * is refused (the reason is the refusal's message); failed when it could
   * not start for another reason. An unavailable engine is waited out: the
   * step fails and Temporal tries it again.
   */
  private async rerunOne(auth: AuthContext, batch: RerunBatchRecord, caseId: string): Promise<void> {
    const rerunId = batchRerunId(batch.id, caseId);
    try {
      await this.deps.reruns.rerun(auth, caseId, { from: batch.from, version: batch.version }, rerunId);
      await this.deps.repo.record(batch.id, { caseId, outcome: 'started', reason: null, rerunCaseId: rerunId });
    } catch (err) {
      if (err instanceof DomainError && err.errorCode === 'SERVICE_UNAVAILABLE') throw err;
      const reason = err instanceof Error ? err.message : String(err);
      if (!(err instanceof DomainError)) this.deps.logger.error({ err, batchId: batch.id, caseId }, 'rerun failed');
      await this.deps.repo.record(batch.id, {
        caseId,
        outcome: err instanceof DomainError ? 'skipped' : 'failed',
        reason,
        rerunCaseId: null,
      });
    }
  }

  /** A batch of the caller's organization (404 otherwise) whose workspaces the key all reaches, with the grant (403). */
  private async load(auth: AuthContext, batchId: string, grant: Grant): Promise<RerunBatchRecord> {
    const batch = await this.deps.repo.find(batchId);
    const scoped = auth.scope.type === 'workspaces' ? auth.scope.workspaceIds : undefined;
    const visible =
      batch !== undefined &&
      batch.organizationId === auth.organizationId &&
      (scoped === undefined || (batch.workspaceIds?.every((w) => scoped.includes(w)) ?? false));
    if (!visible) throw DomainError.notFound(`Rerun batch ${batchId} does not exist`);
    assertGrant(auth, grant);
    return batch;
  }

  private async progressOf(batch: RerunBatchRecord): Promise<RerunBatchProgress> {
    const { repo } = this.deps;
    return {
      batch,
      counts: await repo.counts(batch.id),
      skipped: await repo.items(batch.id, 'skipped', LISTED_ITEMS),
      failed: await repo.items(batch.id, 'failed', LISTED_ITEMS),
      temporalUiUrl: temporalUiLink(this.deps.temporal, batch.temporalWorkflowId),
    };
  }
}
