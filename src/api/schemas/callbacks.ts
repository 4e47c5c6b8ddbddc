import { z } from 'zod';

const attemptSchema = z.object({
  attempt: z.number().int().meta({ description: '1-based attempt number' }),
  startedAt: z.string(),
  durationMs: z.number().int(),
  responseStatus: z
    .number()
    .int()
    .nullable()
    .meta({ description: 'HTTP status; null when no response came (refused, timed out)' }),
  responseBody: z.string().nullable().meta({ description: 'First 1 KB of the response body' }),
  error: z.string().nullable(),
});

export const deliverySchema = z.object({
  id: z.string().meta({ description: 'The delivery id, sent as the `webhook-id` header on every attempt' }),
  url: z.string(),
  status: z.enum(['pending', 'delivered', 'failed']),
  attemptCount: z.number().int(),
  nextAttemptAt: z.string().nullable(),
  workflowId: z.string().meta({ description: 'Temporal workflow delivering it' }),
  createdAt: z.string(),
  updatedAt: z.string(),
  payload: z.unknown().meta({ description: 'The JSON body POSTed: { caseId, status, results, error? }' }),
  attempts: z.array(attemptSchema),
});

export const webhookSecretSchema = z.object({
  workspaceId: z.string(),
  secret: z.string().meta({ description: 'Standard Webhooks signing secret (`whsec_` + base64)' }),
  createdAt: z.string(),
  previousValidUntil: z
    .string()
    .nullable()
    .meta({ description: 'Until when callbacks also carry a signature made with the previous secret' }),
});

export const deliveriesSchema = z.object({ caseId: z.string(), deliveries: z.array(deliverySchema) });
export const redeliveryStartedSchema = z.object({
  deliveryId: z.string(),
  workflowId: z.string(),
  status: z.literal('pending'),
});
