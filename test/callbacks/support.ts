import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { CallbackDelivery } from '../../src/domain/callback-records.js';
import { answered, type TestService } from '../support/harness.js';
import { clientFor } from '../support/keys.js';
import type { ReceivedCallback } from './receiver.js';

/** The payload after verifying its Standard Webhooks signature with `secret` (throws when it does not verify). */
export function verified(secret: string, call: ReceivedCallback): Record<string, unknown> {
  return new Webhook(secret).verify(call.body, call.headers as Record<string, string>) as Record<string, unknown>;
}

/** The case's callback deliveries (200), read with `key` or the service's own. */
export async function callbacksOf(svc: TestService, caseId: string, key?: string) {
  const client = key ? clientFor(svc, key) : svc.client;
  return answered(client.GET('/api/v1/case/{caseId}/callbacks', { params: { path: { caseId } } }), 200);
}

/** The workspace's current webhook secret (the service's own workspace by default). */
export async function webhookSecret(svc: TestService, workspaceId = svc.workspaceId): Promise<string> {
  const { secret } = await answered(
    svc.client.GET('/api/v1/workspace/{workspaceId}/webhook-secret', { params: { path: { workspaceId } } }),
    200,
  );
  return secret;
}

/** Waits until what is due `dueInMs` from now is overdue past the service's sweep grace period. */
export function pastSweepGrace(svc: TestService, dueInMs = 0): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, dueInMs + svc.config.callbacks.sweepGraceMs + 200));
}

/**
 * A service whose background passes (the reconciler's, the delivery sweep's) run only when a test calls them, with
 * quick retries, and a sweep grace long enough that a pass right after a write finds nothing overdue.
 */
export const passesByHand = {
  cases: { reconcileIntervalMs: 3_600_000 },
  callbacks: {
    initialIntervalMs: 500,
    maximumIntervalMs: 1000,
    maxElapsedMs: 20_000,
    sweepIntervalMs: 3_600_000,
    sweepGraceMs: 1500,
  },
};

/** A pending redelivery whose workflow nothing started, as the store returns it, written at `at` (ISO). */
export function unstartedRedelivery(at = new Date().toISOString()): CallbackDelivery {
  const caseId = randomUUID();
  return {
    id: `${caseId}-redeliver`,
    caseId,
    workspaceId: randomUUID(),
    url: 'http://127.0.0.1:1/hook',
    body: JSON.stringify({ caseId, status: 'COMPLETED', results: {} }),
    status: 'pending',
    attempts: 0,
    nextAttemptAt: at,
    workflowId: `callback-${caseId}-redeliver-1`,
    subscriptionId: null,
    createdAt: at,
    updatedAt: at,
  };
}
