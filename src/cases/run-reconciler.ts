import { newDelivery } from '../callbacks/delivery.js';
import type { Logger } from '../logging/logger.js';
import type { CaseRepo } from '../store/case-repo.js';
import type { CaseRecord } from '../domain/case-records.js';
import { outcomeOnly, type TerminalStatus } from '../domain/cases.js';
import {
  caseCallbackDelivery,
  caseCallbackWorkflowId,
  type CallbackDeliveryInput,
} from '../temporal/contracts/callback-delivery.js';
import { caseWorkflowId } from '../temporal/contracts/case-run.js';
import type { CallbackDeliveryGateway } from '../temporal/gateways/callback-deliveries.js';
import type { CaseRunGateway } from '../temporal/gateways/case-runs.js';
import type { CallbackRepo } from '../store/callback-repo.js';
import type { SubscriptionService } from '../subscriptions/subscription-service.js';
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
      callbacks: Pick<CallbackDeliveryGateway, 'start'>;
      /** Reads a delivery's row: a callback owed is started only while its row waits for a first attempt. */
      deliveries: Pick<CallbackRepo, 'findDelivery'>;
      /** Starts the event deliveries of an end that did not start (their rows commit with the end). */
      events: Pick<SubscriptionService, 'dispatchUnstarted'>;
      logger: Logger;
      /** A sub-workflow case younger than this may still be waiting for its parent to start its run. */
      childStartGraceMs: number;
    },
  ) {}

  /**
   * Deliveries of ends this process recorded (or may have: the end failed after its commit) that did not all
   * start, by case id: tried again at each pass until they do. A closed case is not RUNNING, so no later pass
   * would look at it again; starting twice is harmless (delivery workflows refuse a duplicate id). Entries of a process
   * that dies are left to the delivery sweep (src/callbacks/delivery-sweep.ts), which finds their rows pending.
   */
  private readonly owed = new Map<string, () => Promise<void>>();

  /** One pass over every RUNNING case with a linked run (or a sub-workflow case's); how many were closed. */
  async reconcile(): Promise<number> {
    await this.settleOwed();
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
    const delivery = callback && newDelivery({ ...callback, workflowId: caseCallbackWorkflowId(record.id) });
    const owes = (events: boolean) => () => this.startOwed(record, outcome.status, callback, events);
    // From here the end may be committed though finalize throws (its dispatch after the commit failed): then the
    // events are owed too.
    const ifThrown = owes(true);
    this.owed.set(record.id, ifThrown);
    const finished = await this.deps.cases.finalize(
      {
        caseId: record.id,
        workspaceId,
        status: outcome.status,
        runId: runId ?? '',
        progress: outcomeOnly(record.id, outcome.status, outcome),
      },
      delivery,
    );
    // It did not throw: not recorded, another pass owes what the end owes (its own entry stays); recorded, finalize
    // dispatched the events, and only the callback is left.
    if (this.owed.get(record.id) === ifThrown) this.owed.delete(record.id);
    if (!finished) return false;
    this.deps.logger.warn(
      { caseId: record.id, runId, status: outcome.status },
      'closed a case whose run ended without recording it',
    );
    if (callback) await this.settle(record.id, owes(false));
    return true;
  }

  private async settleOwed(): Promise<void> {
    for (const [caseId, owes] of [...this.owed]) await this.settle(caseId, owes);
  }

  /** Starts what the case's end owes; kept for the next pass when Temporal (or the store) refuses. */
  private async settle(caseId: string, owes: () => Promise<void>): Promise<void> {
    try {
      await owes();
      if (this.owed.get(caseId) === owes) this.owed.delete(caseId);
    } catch (err) {
      this.owed.set(caseId, owes);
      this.deps.logger.error(
        { err, caseId },
        'the deliveries of a reconciled case could not start; tried again next pass',
      );
    }
  }

  /**
   * The event deliveries that did not start (with `events`), and the callback while its row waits for its first
   * attempt (no row: the end was not committed, and the next pass records it afresh).
   */
  private async startOwed(
    record: CaseRecord,
    status: TerminalStatus,
    callback: CallbackDeliveryInput | undefined,
    events: boolean,
  ): Promise<void> {
    if (events) await this.deps.events.dispatchUnstarted(record.id);
    if (!callback) return;
    const row = await this.deps.deliveries.findDelivery(callback.deliveryId);
    if (row?.status !== 'pending' || row.attempts > 0) return;
    const { organizationId, workspaceId, workflowId } = record;
    await this.deps.callbacks.start(caseCallbackWorkflowId(record.id), callback, {
      organizationId,
      workspaceId,
      workflowId,
      caseStatus: status,
    });
  }
}
