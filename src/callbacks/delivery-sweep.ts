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
import type { CaseRunGateway } from '../temporal/gateways/case-runs.js';

export interface DeliverySweepDeps {
  repo: Pick<CallbackRepo, 'overdueDeliveries' | 'failStalled'>;
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

/**
 * Starts the delivery workflow of every pending delivery (a case's callback, a subscription's event) that nothing is
 * delivering: its next attempt is overdue by more than the grace period, so the process that was to start its workflow
 * died between the commit that wrote the row and the start (a reconciled end, a redelivery), or Temporal refused the
 * start. The workflow id is the one the row was written for, and a delivery workflow never starts twice under one id
 * (REJECT_DUPLICATE), so a delivery whose workflow runs is left to it. One whose workflow closed without recording
 * its end (terminated, or the store down through its last write) is failed: nothing would ever deliver it, and
 * once Temporal forgets that workflow a start would send it again. Each pass looks at one batch, going on from where
 * the last one stopped, so a backlog of overdue deliveries whose workflows run does not hide the ones behind it.
 */
export class DeliverySweep {
  private readonly swept: Counter<'action'>;
  /** Where the next pass goes on from; undefined: from the oldest overdue delivery. */
  private after: DueKeyset | undefined;

  constructor(private readonly deps: DeliverySweepDeps) {
    this.swept = new Counter({
      name: 'caseflow_callback_deliveries_swept_total',
      help: 'Pending deliveries (callbacks and events) nothing was delivering: started (their workflow), failed (it had ended without recording them)',
      labelNames: ['action'] as const,
      registers: [deps.registry],
    });
  }

  /** One pass over a batch of overdue deliveries; how many workflows it started. */
  async sweep(): Promise<number> {
    const { repo, batch, graceMs } = this.deps;
    const dueBefore = new Date(Date.now() - graceMs).toISOString();
    const page = await repo.overdueDeliveries(dueBefore, this.after, batch);
    const last = page.at(-1);
    this.after = page.length < batch || !last?.nextAttemptAt ? undefined : { dueAt: last.nextAttemptAt, id: last.id };
    const organizations = new Map<string, string | undefined>();
    let started = 0;
    for (const delivery of page) {
      try {
        if (await this.restart(delivery, organizations)) started++;
      } catch (err) {
        this.deps.logger.error({ err, deliveryId: delivery.id }, 'could not start the workflow of a pending delivery');
      }
    }
    return started;
  }

  private async restart(delivery: CallbackDelivery, organizations: Map<string, string | undefined>): Promise<boolean> {
    const workflowId = await this.workflowOf(delivery);
    if (!workflowId) return false;
    const { id, caseId, workspaceId, url, attempts, subscriptionId } = delivery;
    if (!organizations.has(workspaceId))
      organizations.set(workspaceId, (await this.deps.tenancy.findWorkspace(workspaceId))?.organizationId);
    const organizationId = organizations.get(workspaceId);
    if (!organizationId) return false;
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
      if ((await this.deps.deliveries.closed(workflowId)) && (await this.deps.repo.failStalled(id))) {
        this.swept.inc({ action: 'failed' });
        this.deps.logger.warn(
          { deliveryId: id, caseId, workflowId, attempts },
          'failed a pending delivery whose workflow ended without recording it',
        );
      }
      return false;
    }
    this.swept.inc({ action: 'started' });
    this.deps.logger.warn(
      { deliveryId: id, caseId, workflowId, attempts, dueAt: delivery.nextAttemptAt },
      'started the workflow of a pending delivery nothing was delivering',
    );
    return true;
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
