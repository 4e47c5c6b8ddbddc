import type { z } from 'zod';
import type { EventType } from '../../domain/events.js';
import type { RotatedSecret } from '../../subscriptions/subscription-secrets.js';
import type { CreatedSubscription, SubscriptionDeliveries } from '../../subscriptions/subscription-service.js';
import type { EventSubscription } from '../../domain/events.js';
import type { Page } from '../../domain/page.js';
import type {
  createdSubscriptionSchema,
  rotatedSubscriptionSecretSchema,
  subscriptionDeliveriesSchema,
  subscriptionListSchema,
  subscriptionSchema,
} from '../schemas/subscriptions.js';
import { deliveryView } from './callbacks.js';

export function subscriptionView(s: EventSubscription): z.infer<typeof subscriptionSchema> {
  return {
    id: s.id,
    workspaceId: s.workspaceId,
    url: s.url,
    // Stored from the enum; a type removed from the enum later would still be shown as stored.
    eventTypes: s.eventTypes as EventType[],
    description: s.description,
    enabled: s.enabled,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
  };
}

export function createdSubscriptionView(created: CreatedSubscription): z.infer<typeof createdSubscriptionSchema> {
  return { ...subscriptionView(created.subscription), secret: created.secret };
}

export function subscriptionListView(page: Page<EventSubscription>): z.infer<typeof subscriptionListSchema> {
  return { subscriptions: page.items.map(subscriptionView), nextCursor: page.nextCursor };
}

export function rotatedSubscriptionSecretView(rotated: RotatedSecret): z.infer<typeof rotatedSubscriptionSecretSchema> {
  return { secret: rotated.secret, previousValidUntil: rotated.previousValidUntil };
}

export function subscriptionDeliveriesView(
  subscriptionId: string,
  { page, attempts }: SubscriptionDeliveries,
): z.infer<typeof subscriptionDeliveriesSchema> {
  return {
    subscriptionId,
    deliveries: page.items.map((d) => ({ ...deliveryView(d, attempts), caseId: d.caseId })),
    nextCursor: page.nextCursor,
  };
}
