import type { CaseError, CaseResults, TerminalStatus } from '../../domain/cases.js';
import type { CaseEventBody } from '../../domain/events.js';
import { workflowContract } from './contract.js';

/** How a callback's retries ended. */
export interface CallbackDeliveryResult {
  deliveryId: string;
  status: 'delivered' | 'failed';
  attempts: number;
}

/** The body POSTed to a case's own callbackUrl. */
export interface CaseCallbackBody {
  caseId: string;
  status: string;
  results: Record<string, unknown>;
  error?: { message: string; nodeId?: string };
}

/** The callback delivery workflow's input: one delivery of a case's end, to its callbackUrl or a subscriber. */
export interface CallbackDeliveryInput {
  /** The delivery's id, also the `webhook-id` header (stable across its attempts). */
  deliveryId: string;
  caseId: string;
  workspaceId: string;
  callbackUrl: string;
  body: CaseCallbackBody | CaseEventBody;
  /** The event subscription delivered to (signed with its secret); absent for the case's callbackUrl. */
  subscriptionId?: string;
  /** Attempts already made before the workflow started (the case run makes the first one itself). */
  attemptsMade?: number;
}

/** The workflow id of the retries of a case's callback (its callbackUrl). */
export const caseCallbackWorkflowId = (caseId: string): string => `callback-${caseId}`;

/**
 * The delivery a case's end owes its callbackUrl, whoever records the end (the case run, or the reconciler for a
 * run that could not): one per case and status, so a retried end finds the same row.
 */
export function caseCallbackDelivery(
  target: { caseId: string; workspaceId: string; callbackUrl: string },
  status: TerminalStatus,
  end: { results: CaseResults; error?: CaseError },
): CallbackDeliveryInput {
  const { caseId, workspaceId, callbackUrl } = target;
  return {
    deliveryId: `${caseId}-${status}`,
    caseId,
    workspaceId,
    callbackUrl,
    body: { caseId, status, results: end.results, ...(end.error ? { error: end.error } : {}) },
  };
}

/** The retry schedule, read from configuration by an activity so the workflow stays deterministic. */
export interface RetrySchedule {
  timeoutMs: number;
  initialIntervalMs: number;
  backoffCoefficient: number;
  maximumIntervalMs: number;
  maxElapsedMs: number;
}

/** A callback's retries after its first attempt, for hours (workflows/callback-delivery.ts). */
export const callbackDeliveryContract =
  workflowContract<(input: CallbackDeliveryInput) => Promise<CallbackDeliveryResult>>('callbackDelivery');
