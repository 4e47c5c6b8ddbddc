import { newDelivery } from '../callbacks/delivery.js';
import type { Logger } from '../logging/logger.js';
import type { CaseRepo } from '../store/case-repo.js';
import type { CaseRecord } from '../domain/case-records.js';
import type { TerminalStatus } from '../domain/cases.js';
import {
  caseCallbackDelivery,
  caseCallbackWorkflowId,
  type CallbackDeliveryInput,
} from '../temporal/contracts/callback-delivery.js';
import { caseWorkflowId } from '../temporal/contracts/case-run.js';
import type { CallbackDeliveryGateway } from '../temporal/gateways/callback-deliveries.js';
import type { CaseRunGateway } from '../temporal/gateways/case-runs.js';
import type { CaseService } from './case-service.js';

const PAGE = 100;

/**
 * Closes RUNNING cases whose Temporal run ended without writing the case row (the store was down
 * longer than the final write's retries, the run was terminated, it hit a history limit): the row
 * takes Temporal's outcome, so no case stays RUNNING forever. A row the run did write is never
 * touched (finalize only writes non-terminal rows). The end is recorded as a run records it, so the
 * case's callbackUrl and the workspace's event subscribers hear of it: only the pass whose write wins
 * delivers, so two processes reconciling at once send each delivery once.
 */
export class CaseRunReconciler {
  constructor(
    private readonly deps: {
      repo: Pick<CaseRepo, 'listRunningWithRun'>;
      runs: Pick<CaseRunGateway, 'closedRun'>;
      /** Records the end: the subscribers' deliveries and the callback's row in its transaction, then their dispatch. */
      cases: Pick<CaseService, 'finalize'>;
      /** Starts the callback's delivery workflow (signed, retried, every attempt logged). */
      callbacks: CallbackDeliveryGateway;
      logger: Logger;
      /** A sub-workflow case younger than this may still be waiting for its parent to start its run. */
      childStartGraceMs: number;
    },
  ) {}

  /** One pass over every RUNNING case with a linked run (or a sub-workflow case's); how many were closed. */
  async reconcile(): Promise<number> {
    let closed = 0;
    let afterId: string | undefined;
    const childrenStartedBefore = new Date(Date.now() - this.deps.childStartGraceMs).toISOString();
    for (;;) {
      const page = await this.deps.repo.listRunningWithRun(afterId, PAGE, childrenStartedBefore);
      for (const record of page) {
        try {
          if (await this.reconcileCase(record)) closed++;
        } catch (err) {
          this.deps.logger.error({ err, caseId: record.id }, 'could not reconcile a case with its run');
        }
      }
      if (page.length < PAGE) return closed;
      afterId = page[page.length - 1]?.id;
    }
  }

  private async reconcileCase(record: CaseRecord): Promise<boolean> {
    const runId = record.temporalRunId ?? undefined;
    const outcome = await this.deps.runs.closedRun(record.temporalWorkflowId ?? caseWorkflowId(record.id), runId);
    if (!outcome) return false;
    const { callbackUrl, workspaceId } = record;
    const callback = callbackUrl
      ? caseCallbackDelivery({ caseId: record.id, workspaceId, callbackUrl }, outcome.status, outcome)
      : undefined;
    const finished = await this.deps.cases.finalize(
      {
        caseId: record.id,
        workspaceId,
        status: outcome.status,
        runId: runId ?? '',
        progress: {
          caseId: record.id,
          status: outcome.status,
          nodes: {},
          executed: [],
          failed: [],
          running: [],
          remaining: [],
          results: outcome.results,
          ...(outcome.error ? { error: outcome.error } : {}),
        },
      },
      callback && newDelivery({ ...callback, workflowId: caseCallbackWorkflowId(record.id) }),
    );
    if (!finished) return false;
    this.deps.logger.warn(
      { caseId: record.id, runId, status: outcome.status },
      'closed a case whose run ended without recording it',
    );
    if (callback) await this.callBack(record, outcome.status, callback);
    return true;
  }

  /** The case is closed whatever happens here: a start that fails leaves its delivery pending, to redeliver. */
  private async callBack(record: CaseRecord, status: TerminalStatus, callback: CallbackDeliveryInput): Promise<void> {
    const { organizationId, workspaceId, workflowId } = record;
    try {
      await this.deps.callbacks.start(caseCallbackWorkflowId(record.id), callback, {
        organizationId,
        workspaceId,
        workflowId,
        caseStatus: status,
      });
    } catch (err) {
      this.deps.logger.error({ err, caseId: record.id }, 'the callback of a reconciled case could not start');
    }
  }
}
