import { Counter, type Registry } from 'prom-client';
import type { CallbackDelivery } from '../domain/callback-records.js';
import type { CaseEventBody } from '../domain/events.js';
import type { Logger } from '../logging/logger.js';
import type { CallbackRepo, DueKeyset } from '../store/callback-repo.js';
import type { TenancyRepo } from '../store/tenancy-repo.js';
import {
  caseCallbackWorkflowId,
  type CallbackDeliveryInput,
  type CaseCallbackBody,
} from '../temporal/contracts/callback-delivery.js';
import { caseWorkflowId } from '../temporal/contracts/case-run.js';
import type { CallbackDeliveryGateway } from '../temporal/gateways/callback-deliveries.js';
import { isTemporalUnanswered } from '../temporal/unavailable.js';
import type { CaseRunGateway } from '../temporal/gateways/case-runs.js';

export interface DeliverySweepDeps {
  repo: Pick<CallbackRepo, 'overdueDeliveries' | 'failPending'>;
  tenancy: Pick<TenancyRepo, 'findWorkspace'>;
  deliveries: CallbackDeliveryGateway;
  /** Whether the case run a callback's row names is still running (it then starts the retries itself). */
  runs: Pick<CaseRunGateway, 'closedRun'>;
  /** How long past its due time a pending delivery is left to whatever should be making its attempt. */
  graceMs: number;
  /** Deliveries one pass looks at, at most. */
  batch: number;
  logger: Logger;
  registry: Registry;
}

/** Why the sweep ends a delivery rather than start its workflow: shown as the error of its last attempt. */
export const sweptEnds = {
  stalled:
    'not delivered: its delivery workflow ended without recording its end (terminated in Temporal, or the store ' +
    'was down through its last write); redeliver it to send it again',
  workspaceGone: 'not delivered: its workspace was deleted',
  forgotten:
    "not sent again: it stayed pending longer than Temporal keeps a delivery's workflow, so an attempt of that " +
    'workflow may have reached the receiver; redeliver it to send it again',
} as const;

type SweptEnd = keyof typeof sweptEnds;

/** What one pass reads once: the workspaces' organizations, and from when Temporal may have forgotten a workflow. */
interface Pass {
  organizations: Map<string, string | undefined>;
  /** A delivery created before this (ms) may have had a workflow that Temporal has deleted since. */
  forgottenBefore: number;
}

/**
 * Starts the delivery workflow of every pending delivery (a case's callback, a subscription's event) that nothing is
 * delivering: its next attempt is overdue by more than the grace period, so the process that was to start its workflow
 * died between the commit that wrote the row and the start (a reconciled end, a redelivery), or Temporal refused the
 * start. The workflow id is the one the row was written for, and a delivery workflow never starts twice under one id
 * (REJECT_DUPLICATE), so a delivery whose workflow runs is left to it. Ended instead, with the reason as its last
 * attempt (so later passes no longer read it): one whose workflow closed without recording its end (terminated, or
 * the store down through its last write), nothing would ever deliver it; one whose workspace is gone; and one older
 * than the namespace's retention whose workflow Temporal no longer knows. A workflow closes after its delivery's row
 * was written and Temporal keeps it for the retention after its close, so for a younger delivery "unknown to
 * Temporal" means never started and REJECT_DUPLICATE holds; for an older one it may mean deleted, and a start would
 * be accepted and send the receiver again what an attempt of that workflow may have delivered unrecorded. Each pass
 * looks at one batch, going on from where the last one stopped, so a backlog of overdue deliveries whose workflows
 * run does not hide the ones behind it. Every call to Temporal is bounded (the gateway's): a call Temporal leaves
 * unanswered, or one it is unreachable for, ends the pass there, and the next pass begins with that delivery.
 */
export class DeliverySweep {
  private readonly swept: Counter<'action'>;
  /** Where the next pass goes on from; undefined: from the oldest overdue delivery. */
  private after: DueKeyset | undefined;

  constructor(private readonly deps: DeliverySweepDeps) {
    this.swept = new Counter({
      name: 'caseflow_callback_deliveries_swept_total',
      help:
        'Pending deliveries (callbacks and events) nothing was delivering: started (their workflow), failed (nothing ' +
        'would deliver them: their workflow ended without recording them, their workspace is gone, or Temporal ' +
        'forgot a workflow that may have sent them)',
      labelNames: ['action'] as const,
      registers: [deps.registry],
    });
  }

  /** One pass over a batch of overdue deliveries; how many workflows it started. */
  async sweep(): Promise<number> {
    const { repo, batch, graceMs, deliveries } = this.deps;
    const dueBefore = new Date(Date.now() - graceMs).toISOString();
    const page = await repo.overdueDeliveries(dueBefore, this.after, batch);
    const pass: Pass = { organizations: new Map(), forgottenBefore: 0 };
    if (page.length > 0) {
      const retentionMs = await deliveries.retentionMs();
      if (retentionMs !== undefined) pass.forgottenBefore = Date.now() - retentionMs;
    }
    const last = page.at(-1);
    const resumeAt = this.after;
    this.after = page.length < batch || !last?.nextAttemptAt ? undefined : { dueAt: last.nextAttemptAt, id: last.id };
    let started = 0;
    let previous = resumeAt;
    for (const delivery of page) {
      try {
        if (await this.restart(delivery, pass)) started++;
      } catch (err) {
        this.deps.logger.error({ err, deliveryId: delivery.id }, 'could not start the workflow of a pending delivery');
        // Temporal is unreachable or left the call unanswered: the rest would wait out the same deadline one by
        // one. The next pass begins with this delivery.
        if (isTemporalUnanswered(err)) {
          this.after = previous;
          break;
        }
      }
      if (delivery.nextAttemptAt) previous = { dueAt: delivery.nextAttemptAt, id: delivery.id };
    }
    return started;
  }

  private async restart(delivery: CallbackDelivery, pass: Pass): Promise<boolean> {
    const workflowId = await this.workflowOf(delivery);
    if (!workflowId) return false;
    const { id, caseId, workspaceId, url, attempts, subscriptionId } = delivery;
    if (!pass.organizations.has(workspaceId))
      pass.organizations.set(workspaceId, (await this.deps.tenancy.findWorkspace(workspaceId))?.organizationId);
    const organizationId = pass.organizations.get(workspaceId);
    if (!organizationId) return this.end(delivery, workflowId, 'workspaceGone');
    if (Date.parse(delivery.createdAt) < pass.forgottenBefore) {
      const state = await this.deps.deliveries.state(workflowId);
      return state === 'running' ? false : this.end(delivery, workflowId, state === 'closed' ? 'stalled' : 'forgotten');
    }
    const body = JSON.parse(delivery.body) as CaseCallbackBody | CaseEventBody;
    const input: CallbackDeliveryInput = {
      deliveryId: id,
      caseId,
      workspaceId,
      callbackUrl: url,
      body,
      ...(subscriptionId ? { subscriptionId } : {}),
      // The attempts made before it stopped: the workflow carries on with the next, after its backoff.
      ...(attempts > 0 ? { attemptsMade: attempts } : {}),
    };
    const caseStatus = 'data' in body ? body.data.status : body.status;
    const outcome = await this.deps.deliveries.start(workflowId, input, { organizationId, workspaceId, caseStatus });
    if (outcome === 'conflict') {
      return (await this.deps.deliveries.state(workflowId)) === 'closed'
        ? this.end(delivery, workflowId, 'stalled')
        : false;
    }
    this.swept.inc({ action: 'started' });
    this.deps.logger.warn(
      { deliveryId: id, caseId, workflowId, attempts, dueAt: delivery.nextAttemptAt },
      'started the workflow of a pending delivery nothing was delivering',
    );
    return true;
  }

  /** Fails the delivery as read, saying why; false (nothing started) either way. */
  private async end(delivery: CallbackDelivery, workflowId: string, why: SweptEnd): Promise<false> {
    if (await this.deps.repo.failPending(delivery, sweptEnds[why])) {
      this.swept.inc({ action: 'failed' });
      const { id, caseId, attempts } = delivery;
      this.deps.logger.warn(
        { deliveryId: id, caseId, workflowId, attempts, reason: why },
        'failed a pending delivery nothing would deliver',
      );
    }
    return false;
  }

  /**
   * The delivery workflow to start; undefined when there is none to start yet. A case's callback names the case's
   * run while the run makes its first attempt, and the run then starts the retries as `callback-<caseId>`: only
   * once that run has closed (terminated between its end and that start) does the sweep start them.
   */
  private async workflowOf(delivery: CallbackDelivery): Promise<string | undefined> {
    const run = caseWorkflowId(delivery.caseId);
    if (delivery.subscriptionId !== null || delivery.workflowId !== run) return delivery.workflowId;
    return (await this.deps.runs.closedRun(run, undefined)) ? caseCallbackWorkflowId(delivery.caseId) : undefined;
  }
}
