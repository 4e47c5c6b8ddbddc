import type { z } from 'zod';
import type { CaseDeliveries, Redelivery } from '../../callbacks/callback-service.js';
import type { WorkspaceWebhookSecret } from '../../callbacks/webhook-secrets.js';
import type { CallbackAttempt, CallbackDelivery } from '../../domain/callback-records.js';
import type {
  deliveriesSchema,
  deliverySchema,
  redeliveryStartedSchema,
  webhookSecretSchema,
} from '../schemas/callbacks.js';

export function deliveriesView(
  caseId: string,
  { deliveries, attempts }: CaseDeliveries,
): z.infer<typeof deliveriesSchema> {
  return { caseId, deliveries: deliveries.map((d) => deliveryView(d, attempts)) };
}

/** One delivery with its attempts (a case's callbacks, a subscription's deliveries). */
export function deliveryView(
  d: CallbackDelivery,
  attempts: Map<string, CallbackAttempt[]>,
): z.infer<typeof deliverySchema> {
  return {
    id: d.id,
    url: d.url,
    status: d.status,
    attemptCount: d.attempts,
    nextAttemptAt: d.nextAttemptAt,
    workflowId: d.workflowId,
    createdAt: d.createdAt,
    updatedAt: d.updatedAt,
    payload: JSON.parse(d.body) as unknown,
    attempts: attempts.get(d.id) ?? [],
  };
}

export function redeliveryStartedView({ deliveryId, workflowId }: Redelivery): z.infer<typeof redeliveryStartedSchema> {
  return { deliveryId, workflowId, status: 'pending' };
}

export function webhookSecretView(secret: WorkspaceWebhookSecret): z.infer<typeof webhookSecretSchema> {
  return {
    workspaceId: secret.workspaceId,
    secret: secret.secret,
    createdAt: secret.createdAt,
    previousValidUntil: secret.previousValidUntil,
  };
}
