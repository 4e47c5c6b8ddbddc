import { signedHeaders } from '../src/callbacks/signing.js';
import type { DeliveryStatus } from '../src/store/callback-repo.js';
import { Outbound, OutboundRefusedError, RequestError } from '../src/net/outbound.js';
import type { ActivityDeps } from './deps.js';

/** How many bytes of a receiver's response body are kept per attempt. */
export const RESPONSE_BODY_LIMIT = 1024;

export interface OpenDeliveryInput {
  deliveryId: string;
  caseId: string;
  workspaceId: string;
  callbackUrl: string;
  body: unknown;
  workflowId: string;
}

/** The retry schedule, read from configuration by an activity so the workflow stays deterministic. */
export interface RetrySchedule {
  timeoutMs: number;
  initialIntervalMs: number;
  backoffCoefficient: number;
  maximumIntervalMs: number;
  maxElapsedMs: number;
}

export interface AttemptInput {
  deliveryId: string;
  /** 1-based. */
  attempt: number;
  /** Delay before the next attempt should this one fail; null when it is the last one. */
  retryInMs: number | null;
}

export type AttemptOutcome = 'delivered' | 'retry' | 'failed';

export interface AttemptResult {
  outcome: AttemptOutcome;
  responseStatus: number | null;
  error: string | null;
}

interface HttpOutcome {
  status: number | null;
  body: string | null;
  error: string | null;
}

/**
 * 2xx delivers. 410 Gone ends the delivery: the receiver says the endpoint is
 * gone for good. Everything else is retried, including other 4xx: receivers
 * commonly answer 401/404 while being deployed or before their secret is set,
 * and a retry costs little (Svix does the same).
 */
export function classifyStatus(status: number | null): AttemptOutcome {
  if (status !== null && status >= 200 && status < 300) return 'delivered';
  if (status === 410) return 'failed';
  return 'retry';
}

/** POSTs once through the outbound policy (no redirects: a signed payload must not be re-sent elsewhere), keeps the first 1 KB of the answer. */
async function post(outbound: Outbound, url: string, body: string, headers: Record<string, string>, timeoutMs: number): Promise<HttpOutcome> {
  try {
    const response = await outbound.request(url, { method: 'POST', body, headers, timeoutMs, maxResponseBytes: RESPONSE_BODY_LIMIT });
    const error = classifyStatus(response.status) === 'delivered' ? null : `receiver answered HTTP ${response.status}`;
    return { status: response.status, body: response.body, error };
  } catch (err) {
    return { status: null, body: null, error: describeError(err, timeoutMs) };
  }
}

function describeError(err: unknown, timeoutMs: number): string {
  if (err instanceof OutboundRefusedError) return err.message;
  if (err instanceof RequestError) {
    if (err.name === 'TimeoutError') return `no answer within ${timeoutMs} ms`;
    return err.code ? `${err.code}: ${err.message}` : err.message;
  }
  return err instanceof Error ? err.message : String(err);
}

/** Activities that deliver case completion callbacks. */
export function createCallbackActivities(deps: ActivityDeps) {
  const repo = deps.repos.callbacks;
  const settings = deps.config.callbacks;
  const log = deps.logger.child({ component: 'callbacks' });
  // DNS is checked again at every attempt: a name that was public at execute may point inside now.
  const outbound = new Outbound({ allowCidrs: deps.config.outbound.allowCidrs });

  return {
    /** Records the delivery (idempotent: a redelivery's row already exists) and hands the workflow its schedule. */
    async openCallbackDelivery(input: OpenDeliveryInput): Promise<RetrySchedule> {
      await repo.createDelivery({
        id: input.deliveryId,
        caseId: input.caseId,
        workspaceId: input.workspaceId,
        url: input.callbackUrl,
        body: JSON.stringify(input.body),
        workflowId: input.workflowId,
      });
      return {
        timeoutMs: settings.timeoutMs,
        initialIntervalMs: settings.initialIntervalMs,
        backoffCoefficient: settings.backoffCoefficient,
        maximumIntervalMs: settings.maximumIntervalMs,
        maxElapsedMs: settings.maxElapsedMs,
      };
    },

    /**
     * One signed POST of the stored body. HTTP failures are results, not
     * exceptions: the attempt is recorded either way and the workflow decides
     * when to try again. Only infrastructure failures (store down) throw.
     */
    async deliverCallback(input: AttemptInput): Promise<AttemptResult> {
      const delivery = await repo.findDelivery(input.deliveryId);
      if (!delivery) throw new Error(`callback delivery ${input.deliveryId} does not exist`);
      const started = new Date();
      const headers = {
        'content-type': 'application/json',
        'user-agent': 'caseflow-webhooks/1',
        ...signedHeaders(await deps.services.callbacks.signingSecrets(delivery.workspaceId, started), delivery.id, Math.floor(started.getTime() / 1000), delivery.body),
      };
      const http = await post(outbound, delivery.url, delivery.body, headers, settings.timeoutMs);
      const durationMs = Date.now() - started.getTime();
      let outcome = classifyStatus(http.status);
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
        nextAttemptAt: outcome === 'retry' ? new Date(Date.now() + (input.retryInMs as number)).toISOString() : null,
      });
      log.info({ deliveryId: delivery.id, caseId: delivery.caseId, attempt: input.attempt, responseStatus: http.status, outcome, durationMs }, 'callback attempt');
      return { outcome, responseStatus: http.status, error: http.error };
    },

    /** Ends a delivery that stops without a final attempt (its workflow was cancelled). */
    async finishCallbackDelivery(input: { deliveryId: string; status: DeliveryStatus }): Promise<void> {
      await repo.finishDelivery(input.deliveryId, input.status);
    },
  };
}

export type CallbackActivities = ReturnType<typeof createCallbackActivities>;
