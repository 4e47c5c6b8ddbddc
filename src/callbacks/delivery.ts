import { OutboundRefusedError, OutboundRequestError, type Outbound } from '../net/outbound.js';
import type { NewDelivery } from '../store/callback-repo.js';
import type { RetrySchedule } from '../temporal/contracts/callback-delivery.js';

/** How many bytes of a receiver's response body are kept per attempt. */
const RESPONSE_BODY_LIMIT = 1024;

/** What the delivery workflow and its activities pass: the delivery, its schedule, one attempt. */
export interface OpenDeliveryInput {
  deliveryId: string;
  caseId: string;
  workspaceId: string;
  callbackUrl: string;
  body: unknown;
  workflowId: string;
  subscriptionId?: string;
}

/** The row a delivery is recorded as before its first attempt. */
export function newDelivery(input: OpenDeliveryInput): NewDelivery {
  return {
    id: input.deliveryId,
    caseId: input.caseId,
    workspaceId: input.workspaceId,
    url: input.callbackUrl,
    body: JSON.stringify(input.body),
    workflowId: input.workflowId,
    ...(input.subscriptionId ? { subscriptionId: input.subscriptionId } : {}),
  };
}

/** The first attempt, made inside the case run; the schedule is what a retry workflow continues with. */
export interface FirstAttemptResult extends AttemptResult {
  schedule: RetrySchedule;
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

export interface HttpOutcome {
  status: number | null;
  body: string | null;
  error: string | null;
  /** No answer within the timeout (a receiver or a process too slow), as opposed to a refused or broken connection. */
  timedOut?: boolean;
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
export async function post(
  outbound: Outbound,
  url: string,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<HttpOutcome> {
  try {
    const response = await outbound.request(url, {
      method: 'POST',
      body,
      headers,
      timeoutMs,
      maxResponseBytes: RESPONSE_BODY_LIMIT,
      // A receiver drops a second copy by its webhook-id.
      resendOnStaleSocket: true,
    });
    const error = classifyStatus(response.status) === 'delivered' ? null : `receiver answered HTTP ${response.status}`;
    return { status: response.status, body: response.body, error };
  } catch (err) {
    const timedOut = err instanceof OutboundRequestError && err.timedOut;
    return { status: null, body: null, error: describeError(err, timeoutMs), timedOut };
  }
}

function describeError(err: unknown, timeoutMs: number): string {
  if (err instanceof OutboundRefusedError) return err.message;
  if (err instanceof OutboundRequestError) {
    if (err.timedOut) return `no answer within ${timeoutMs} ms`;
    return err.code ? `${err.code}: ${err.message}` : err.message;
  }
  return err instanceof Error ? err.message : String(err);
}
