import { z } from 'zod';
import { eventTypes } from '../../domain/events.js';
import { deliverySchema } from './callbacks.js';
import { nextCursorSchema, pageQueryFields, uuid } from './common.js';

const eventTypeList = z
  .array(z.enum(eventTypes))
  .min(1)
  .max(eventTypes.length)
  .meta({ description: 'Which events to receive (duplicates are ignored)' });

const webhookUrl = z
  .url({ protocol: /^https?$/ })
  .max(2048)
  .meta({ description: 'Where events are POSTed; checked against the outbound policy like a callbackUrl' });

export const subscriptionCreateSchema = z
  .object({
    workspaceId: uuid.meta({ description: 'The workspace whose events are delivered' }),
    url: webhookUrl,
    eventTypes: eventTypeList,
    description: z.string().max(500).optional(),
    enabled: z.boolean().optional().meta({ description: 'Default true' }),
  })
  .strict();

export const subscriptionUpdateSchema = z
  .object({
    url: webhookUrl.optional(),
    eventTypes: eventTypeList.optional(),
    description: z.string().max(500).nullable().optional(),
    enabled: z.boolean().optional().meta({ description: 'false: no new events are delivered until it is true again' }),
  })
  .strict();

export const subscriptionSchema = z.object({
  id: z.string(),
  workspaceId: z.string(),
  url: z.string(),
  eventTypes: z.array(z.enum(eventTypes)),
  description: z.string().nullable(),
  enabled: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const createdSubscriptionSchema = subscriptionSchema.extend({
  secret: z.string().meta({
    description:
      'Standard Webhooks signing secret (`whsec_` + base64), shown only in this answer; rotate to get a new one',
  }),
});

export const rotatedSubscriptionSecretSchema = z.object({
  secret: z.string().meta({ description: 'The new signing secret, shown only in this answer' }),
  previousValidUntil: z
    .string()
    .meta({ description: 'Until when deliveries also carry a signature made with the previous secret' }),
});

export const subscriptionListQuery = z
  .object({ workspaceId: uuid.optional().meta({ description: 'Only this workspace' }), ...pageQueryFields })
  .strict();

export const subscriptionListSchema = z.object({
  subscriptions: z.array(subscriptionSchema).meta({ description: 'Newest first' }),
  nextCursor: nextCursorSchema,
});

export const subscriptionDeliveriesQuery = z.object(pageQueryFields).strict();

export const subscriptionDeliveriesSchema = z.object({
  subscriptionId: z.string(),
  deliveries: z
    .array(deliverySchema.extend({ caseId: z.string() }))
    .meta({ description: 'Newest first; payload is the event: { type, timestamp, data }' }),
  nextCursor: nextCursorSchema,
});

export const subscriptionRedeliveryParams = z.object({ subscriptionId: uuid, deliveryId: z.string().min(1).max(128) });
