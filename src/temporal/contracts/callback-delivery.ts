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
