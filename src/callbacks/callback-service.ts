import { randomUUID } from 'node:crypto';
import { assertWorkspaceGrant, requireWorkspaceGrant } from '../auth/access.js';
import type { AuthContext } from '../domain/auth-context.js';
import type { Grant } from '../domain/grants.js';
import type { Config } from '../config/config.js';
import { DomainError } from '../errors.js';
import type { Logger } from '../logging/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Outbound } from '../net/outbound.js';
import type { CallbackAttempt, CallbackDelivery, DeliveryStatus } from '../domain/callback-records.js';
import type { CallbackRepo } from '../store/callback-repo.js';
import type { CaseRepo } from '../store/case-repo.js';
import type { TenancyRepo } from '../store/tenancy-repo.js';
import type {
  CallbackDeliveryInput,
  CaseCallbackBody,
  RetrySchedule,
} from '../temporal/contracts/callback-delivery.js';
import type { CallbackDeliveryGateway } from '../temporal/gateways/callback-deliveries.js';
import { isTemporalUnanswered } from '../temporal/unavailable.js';
import {
  classifyStatus,
  post,
  type AttemptInput,
  type AttemptResult,
  type FirstAttemptResult,
  newDelivery,
  type HttpOutcome,
  type OpenDeliveryInput,
} from './delivery.js';
import { signedHeaders } from './signing.js';
import type { WebhookSecrets, WorkspaceWebhookSecret } from './webhook-secrets.js';

export interface CallbackServiceDeps {
  repo: CallbackRepo;
  cases: CaseRepo;
  tenancy: TenancyRepo;
  secrets: WebhookSecrets;
  /** Delivery workflows in Temporal (redeliveries start one). */
  deliveries: CallbackDeliveryGateway;
  settings: Config['callbacks'];
  /** The outbound policy: DNS is checked again at every attempt, a name public at execute may point inside now. */
  outbound: Outbound;
  logger: Logger;
  metrics: Pick<Metrics, 'callbackAttempt' | 'callbackFirstAttemptMissed'>;
  /** An event subscription's signing secrets (current first); undefined once it is deleted. */
  subscriptionSecrets: (subscriptionId: string, at: Date) => Promise<string[] | undefined>;
}

/** A case's deliveries, oldest first, with each one's attempts in order. */
export interface CaseDeliveries {
  deliveries: CallbackDelivery[];
  attempts: Map<string, CallbackAttempt[]>;
}

export interface Redelivery {
  deliveryId: string;
  workflowId: string;
}

/**
 * Callback deliveries of a case (read, redeliver; on the worker: record, sign,
 * send, classify each attempt) and each workspace's webhook signing secret
 * (read, rotate).
 */
export class CallbackService {
  constructor(private readonly deps: CallbackServiceDeps) {}

  async listDeliveries(auth: AuthContext, caseId: string): Promise<CaseDeliveries> {
    const { deliveries } = await this.authorizedDeliveries(auth, caseId, 'case:read');
    return { deliveries, attempts: await this.deps.repo.listAttempts(deliveries.map((d) => d.id)) };
  }

  /**
   * Sends the case's latest callback again as a new delivery. `admit` runs once the case's
   * workspace is known and before anything is written: the caller's rate limit, which may refuse.
   */
  async redeliver(
    auth: AuthContext,
    caseId: string,
    admit: (workspaceId: string) => Promise<void>,
  ): Promise<Redelivery> {
    const { workspaceId, deliveries } = await this.authorizedDeliveries(auth, caseId, 'case:full');
    const last = deliveries.at(-1);
    if (!last) throw DomainError.conflict(`Case ${caseId} has no callback to redeliver`);
    await admit(workspaceId);
    const deliveryId = randomUUID();
    const workflowId = `callback-${caseId}-redeliver-${deliveries.length}`;
    // The row first, so the delivery is listed as soon as this answers; the workflow's own insert is then a no-op.
    await this.deps.repo.createDelivery({
      id: deliveryId,
      caseId,
      workspaceId,
      url: last.url,
      body: last.body,
      workflowId,
    });
    const body = JSON.parse(last.body) as CaseCallbackBody;
    const input: CallbackDeliveryInput = { deliveryId, caseId, workspaceId, callbackUrl: last.url, body };
    const started = await this.deps.deliveries
      .start(workflowId, input, { organizationId: auth.organizationId, workspaceId, caseStatus: body.status })
      .catch(async (err: unknown) => {
        // No answer, or Temporal unreachable: the start may have landed. The row stays pending and the delivery
        // sweep starts it under this id or finds it running: deleting it would make the caller's retry a second copy.
        if (isTemporalUnanswered(err)) {
          this.deps.logger.warn(
            { err, caseId, deliveryId, workflowId },
            'redelivery accepted; its start is left to the delivery sweep',
          );
          return 'started' as const;
        }
        await this.deps.repo.deleteDelivery(deliveryId);
        throw err;
      });
    if (started === 'conflict') {
      await this.deps.repo.deleteDelivery(deliveryId);
      throw DomainError.conflict('Another redelivery of this case is starting; try again');
    }
    return { deliveryId, workflowId };
  }

  /** The workspace's signing secret, for a caller with Case: Full there: it lets its holder forge callbacks. */
  async webhookSecret(auth: AuthContext, workspaceId: string): Promise<WorkspaceWebhookSecret> {
    await requireWorkspaceGrant(this.deps.tenancy, auth, workspaceId, 'case:full');
    return this.deps.secrets.current(workspaceId);
  }

  async rotateWebhookSecret(auth: AuthContext, workspaceId: string): Promise<WorkspaceWebhookSecret> {
    await requireWorkspaceGrant(this.deps.tenancy, auth, workspaceId, 'case:full');
    return this.deps.secrets.rotate(workspaceId);
  }

  /** Records the delivery (idempotent: a redelivery's row already exists) and hands the workflow its schedule. */
  async openDelivery(input: OpenDeliveryInput): Promise<RetrySchedule> {
    await this.deps.repo.createDelivery(newDelivery(input));
    return this.schedule();
  }

  /**
   * Opens the delivery and makes its first attempt at once, from the case run
   * itself: most receivers answer the first time, and then no retry workflow
   * is needed at all. A failed attempt is recorded like any other, due again
   * after the schedule's first interval. The row just written is not read back.
   * `opened`: the case's end wrote the row in its own transaction already.
   */
  async firstAttempt(input: OpenDeliveryInput, opened = false): Promise<FirstAttemptResult> {
    const delivery = newDelivery(input);
    if (!opened) await this.deps.repo.createDelivery(delivery);
    const schedule = this.schedule();
    const { result, timedOut } = await this.attempt(delivery, { attempt: 1, retryInMs: schedule.initialIntervalMs });
    if (result.outcome === 'retry')
      this.deps.metrics.callbackFirstAttemptMissed(
        timedOut ? 'timeout' : result.responseStatus !== null ? 'answered' : 'error',
      );
    return { ...result, schedule };
  }

  /**
   * One signed POST of the stored body. HTTP failures are results, not
   * exceptions: the attempt is recorded either way and the workflow decides
   * when to try again. Only infrastructure failures (store down) throw.
   */
  async deliverAttempt(input: AttemptInput): Promise<AttemptResult> {
    const delivery = await this.deps.repo.findDelivery(input.deliveryId);
    if (!delivery) throw new Error(`callback delivery ${input.deliveryId} does not exist`);
    return (await this.attempt(delivery, input)).result;
  }

  private schedule(): RetrySchedule {
    const { settings } = this.deps;
    return {
      timeoutMs: settings.timeoutMs,
      initialIntervalMs: settings.initialIntervalMs,
      backoffCoefficient: settings.backoffCoefficient,
      maximumIntervalMs: settings.maximumIntervalMs,
      maxElapsedMs: settings.maxElapsedMs,
    };
  }

  private async attempt(
    delivery: Pick<CallbackDelivery, 'id' | 'caseId' | 'workspaceId' | 'url' | 'body'> & {
      subscriptionId?: string | null;
    },
    input: Omit<AttemptInput, 'deliveryId'>,
  ): Promise<{ result: AttemptResult; timedOut: boolean }> {
    const { repo, settings } = this.deps;
    const started = new Date();
    const signingSecrets = await this.signingSecrets(delivery, started);
    let http: HttpOutcome;
    if (signingSecrets) {
      const headers = {
        'content-type': 'application/json',
        'user-agent': 'caseflow-webhooks/1',
        ...signedHeaders(signingSecrets, delivery.id, Math.floor(started.getTime() / 1000), delivery.body),
      };
      http = await post(this.deps.outbound, delivery.url, delivery.body, headers, settings.timeoutMs);
    } else {
      http = { status: null, body: null, error: 'the event subscription was deleted' };
    }
    const durationMs = Date.now() - started.getTime();
    let outcome = signingSecrets ? classifyStatus(http.status) : 'failed';
    if (outcome === 'retry' && input.retryInMs === null) outcome = 'failed';
    const status: DeliveryStatus = outcome === 'delivered' ? 'delivered' : outcome === 'failed' ? 'failed' : 'pending';
    await repo.recordAttempt({
      deliveryId: delivery.id,
      attempt: input.attempt,
      startedAt: started.toISOString(),
      durationMs,
      responseStatus: http.status,
      responseBody: http.body,
      error: http.error,
      status,
      nextAttemptAt:
        outcome === 'retry' && input.retryInMs !== null ? new Date(Date.now() + input.retryInMs).toISOString() : null,
    });
    this.deps.logger.info(
      {
        deliveryId: delivery.id,
        caseId: delivery.caseId,
        attempt: input.attempt,
        responseStatus: http.status,
        outcome,
        durationMs,
      },
      'callback attempt',
    );
    this.deps.metrics.callbackAttempt(outcome);
    return { result: { outcome, responseStatus: http.status, error: http.error }, timedOut: http.timedOut === true };
  }

  /** A subscription's secrets for its deliveries, the workspace's for a case's callbackUrl; undefined: nothing to sign with. */
  private signingSecrets(
    delivery: { workspaceId: string; subscriptionId?: string | null },
    at: Date,
  ): Promise<string[] | undefined> {
    return delivery.subscriptionId
      ? this.deps.subscriptionSecrets(delivery.subscriptionId, at)
      : this.deps.secrets.signingSecrets(delivery.workspaceId, at);
  }

  /** Ends a delivery that stops without a final attempt (its workflow was cancelled). */
  finishDelivery(deliveryId: string, status: DeliveryStatus): Promise<void> {
    return this.deps.repo.finishDelivery(deliveryId, status);
  }

  /**
   * The case's deliveries after checking the grant in the case's workspace:
   * the case record's workspace, or for deliveries whose case record is gone,
   * the workspace the deliveries were made for. 404 when neither exists.
   */
  private async authorizedDeliveries(
    auth: AuthContext,
    caseId: string,
    grant: Grant,
  ): Promise<{ workspaceId: string; deliveries: CallbackDelivery[] }> {
    const deliveries = await this.deps.repo.listDeliveries(caseId);
    const workspaceId = (await this.deps.cases.find(caseId))?.workspaceId ?? deliveries[0]?.workspaceId;
    const workspace = workspaceId === undefined ? undefined : await this.deps.tenancy.findWorkspace(workspaceId);
    // Another organization's case does not exist for this caller, as on the other case routes.
    if (!workspace || workspace.organizationId !== auth.organizationId)
      throw DomainError.notFound(`Case ${caseId} does not exist`);
    assertWorkspaceGrant(auth, workspace, grant);
    return { workspaceId: workspace.id, deliveries };
  }
}
