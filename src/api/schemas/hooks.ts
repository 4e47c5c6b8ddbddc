import { z } from 'zod';
import { atLeastOneOf } from '../../domain/at-least-one.js';
import { caseStatuses } from '../../domain/cases.js';
import { hookModes, hookSchemes } from '../../domain/hooks.js';
import { nextCursorSchema, pageQueryFields, uuid } from './common.js';
import { resultsBodySchema } from './cases.js';

const headerName = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, 'an HTTP header name');

const inputSource = z.union([
  z
    .object({
      body: z
        .string()
        .max(1024)
        .regex(/^(\/.*)?$/, 'a JSON Pointer such as /pull_request/title (RFC 6901); empty for the whole body'),
    })
    .strict()
    .meta({ description: 'The value at this JSON Pointer of the delivery body' }),
  z.object({ header: headerName }).strict().meta({ description: "This request header's value (a string)" }),
  z.object({ value: z.json() }).strict().meta({ description: 'A fixed value' }),
]);

const mapping = z
  .record(z.string().min(1).max(255), inputSource)
  .refine((value) => Object.keys(value).length <= 200, 'at most 200 inputs')
  .meta({
    description:
      'Workflow input name → where its value comes from in a delivery. Without a mapping the JSON body object is the inputs.',
  });

const name = z.string().trim().min(1).max(255);
const mode = z.enum(hookModes).meta({
  description: 'async: 202 with the caseId at once; sync: waits up to syncTimeoutMs for the results (200), else 202',
});
const toleranceSeconds = z
  .number()
  .int()
  .min(1)
  .max(3600)
  .meta({ description: 'How far a signed timestamp (Standard Webhooks, Stripe) may be from now' });
const rateLimitPerMinute = z.number().int().min(1).max(100_000).meta({ description: 'Deliveries per minute' });
const syncTimeout = (maxMs: number) =>
  z
    .number()
    .int()
    .min(1000)
    .max(maxMs)
    .meta({
      description: `How long a sync delivery waits for the results (at most ${maxMs} ms, hooks.maxSyncTimeoutMs)`,
    });

export function hookCreateBody(maxSyncTimeoutMs: number) {
  const common = {
    name,
    mapping: mapping.optional(),
    mode: mode.default('async'),
    syncTimeoutMs: syncTimeout(maxSyncTimeoutMs).default(Math.min(10_000, maxSyncTimeoutMs)),
    toleranceSeconds: toleranceSeconds.default(300),
    rateLimitPerMinute: rateLimitPerMinute.default(60),
    enabled: z.boolean().default(true),
  };
  // One object per scheme, so the document says (oneOf) that only hmac-sha256 takes, and needs, signatureHeader.
  return z.discriminatedUnion('scheme', [
    z
      .object({
        ...common,
        scheme: z.enum(['standard-webhooks', 'github', 'stripe']).meta({ description: 'How deliveries are signed' }),
      })
      .strict(),
    z
      .object({
        ...common,
        scheme: z.literal('hmac-sha256').meta({ description: 'The hex HMAC-SHA256 of the body in a header you name' }),
        signatureHeader: headerName.meta({ description: 'The header with the signature, such as X-Signature' }),
      })
      .strict(),
  ]);
}

export function hookUpdateBody(maxSyncTimeoutMs: number) {
  return atLeastOneOf(
    z
      .object({
        name: name.optional(),
        mapping: mapping.nullable().optional().meta({ description: 'null: the body object is the inputs' }),
        mode: mode.optional(),
        syncTimeoutMs: syncTimeout(maxSyncTimeoutMs).optional(),
        toleranceSeconds: toleranceSeconds.optional(),
        rateLimitPerMinute: rateLimitPerMinute.optional(),
        enabled: z.boolean().optional().meta({ description: 'false: deliveries get 404 and start nothing' }),
      })
      .strict(),
    ['name', 'mapping', 'mode', 'syncTimeoutMs', 'toleranceSeconds', 'rateLimitPerMinute', 'enabled'],
    'Send at least one field to change',
  );
}

export const rotateBody = z
  .object({
    graceSeconds: z
      .number()
      .int()
      .min(0)
      .max(7 * 86_400)
      .default(86_400)
      .meta({ description: 'How long the old secret keeps verifying (default one day, at most 7 days)' }),
  })
  .strict();

export const hookParams = z.object({ hookId: uuid });
export const workflowHookParams = z.object({
  workflowId: uuid.meta({ description: 'The workflowId (or the entityId) of the workflow' }),
});
export const hookListQuery = z.object(pageQueryFields);

export const hookSchema = z.object({
  hookId: z.string(),
  workflowId: z.string(),
  workspaceId: z.string(),
  name: z.string(),
  url: z.string().meta({ description: 'Where senders POST deliveries (no API key: the signature authenticates)' }),
  scheme: z.enum(hookSchemes),
  signatureHeader: z.string().nullable(),
  mapping: z.record(z.string(), z.unknown()).nullable(),
  mode: z.enum(hookModes),
  syncTimeoutMs: z.number(),
  toleranceSeconds: z.number(),
  rateLimitPerMinute: z.number(),
  enabled: z.boolean(),
  previousSecretValidUntil: z
    .string()
    .nullable()
    .meta({ description: 'Until when the secret before the last rotation still verifies; null when none does' }),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export const hookWithSecretSchema = hookSchema.extend({
  secret: z.string().meta({ description: 'The signing secret (whsec_…), shown only in this answer' }),
});
export const hookListSchema = z.object({ hooks: z.array(hookSchema), nextCursor: nextCursorSchema });

export const deliveryHeaders = z.object({
  'webhook-id': z.string().optional().meta({ description: 'standard-webhooks: the delivery id (dedupe key)' }),
  'webhook-timestamp': z.string().optional().meta({ description: 'standard-webhooks: unix seconds' }),
  'webhook-signature': z.string().optional().meta({ description: 'standard-webhooks: v1,<base64> entries' }),
  'x-hub-signature-256': z.string().optional().meta({ description: 'github: sha256=<hex>' }),
  'x-github-delivery': z.string().optional().meta({ description: 'github: the delivery GUID (dedupe key)' }),
  'stripe-signature': z.string().optional().meta({ description: 'stripe: t=<unix>,v1=<hex>' }),
  'idempotency-key': z.string().optional().meta({ description: 'Any scheme: the dedupe key when the scheme has none' }),
});
export const deliveryBody = z.record(z.string(), z.unknown()).meta({ description: 'The sender’s JSON event' });
export const deliveryAcceptedSchema = z.object({
  caseId: z.string(),
  hookId: z.string(),
  status: z.enum(caseStatuses),
  workflowVersionId: z.string(),
  workflowVersionNumber: z.number(),
});
export const deliveryFinishedSchema = resultsBodySchema.extend({ caseId: z.string(), hookId: z.string() });
