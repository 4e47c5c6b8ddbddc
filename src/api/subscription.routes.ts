import type { Response } from 'express';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { takeRateLimit } from './rate-limits.js';
import type { ApiRoutes } from './route.js';
import { redeliveryStartedSchema } from './schemas/callbacks.js';
import { errorBodySchema, uuid } from './schemas/common.js';
import {
  createdSubscriptionSchema,
  rotatedSubscriptionSecretSchema,
  subscriptionCreateSchema,
  subscriptionDeliveriesQuery,
  subscriptionDeliveriesSchema,
  subscriptionListQuery,
  subscriptionListSchema,
  subscriptionRedeliveryParams,
  subscriptionSchema,
  subscriptionUpdateSchema,
} from './schemas/subscriptions.js';
import { redeliveryStartedView } from './views/callbacks.js';
import {
  createdSubscriptionView,
  rotatedSubscriptionSecretView,
  subscriptionDeliveriesView,
  subscriptionListView,
  subscriptionView,
} from './views/subscriptions.js';

const subscriptionParams = z.object({ subscriptionId: uuid });
const notFound = { description: 'The subscription does not exist (or belongs to another organization)' };
const refusedUrl = {
  description: 'Invalid body, or a URL the outbound policy refuses (metadata.fields)',
  schema: errorBodySchema,
};

/** An answer that shows a secret must not sit in shared caches or browser history. */
function noStore(res: Response): Response {
  return res.setHeader('cache-control', 'no-store');
}

/**
 * Event subscriptions of a workspace: who receives case events, signed with
 * the subscription's own secret, through the callback delivery machinery.
 */
export function registerSubscriptionRoutes(api: ApiRoutes, ctx: AppContext): void {
  const { subscriptions, rateLimits } = ctx.services;
  const { redeliverWindowMs: windowMs, redeliverPerWorkspace } = ctx.config.callbacks;
  const tags = ['Event subscriptions'];

  api.route({
    method: 'post',
    path: '/api/v1/subscriptions',
    summary: 'Subscribe a URL to case events of a workspace',
    description:
      "Requires Case: Full in the workspace (events carry case results). The URL must pass the outbound policy (as a callbackUrl does). The answer shows the subscription's Standard Webhooks signing secret, this once; it is stored encrypted.",
    tags,
    auth: true,
    body: subscriptionCreateSchema,
    responses: {
      201: { description: 'Subscribed', schema: createdSubscriptionSchema },
      400: refusedUrl,
      404: { description: 'The workspace does not exist (or belongs to another organization)' },
      409: {
        description: 'The workspace holds events.maxSubscriptionsPerWorkspace subscriptions (metadata.limit)',
        schema: errorBodySchema,
      },
    },
    handler: async ({ auth, body, res }) => {
      noStore(res)
        .status(201)
        .json(createdSubscriptionView(await subscriptions.create(auth, body)));
    },
  });

  api.route({
    method: 'get',
    path: '/api/v1/subscriptions',
    summary: 'List event subscriptions',
    description:
      'Subscriptions newest first, a page at a time (cursor), in the workspaces the key reads with Case: Read; a workspace the key does not reach lists nothing. Secrets are never listed.',
    tags,
    auth: true,
    query: subscriptionListQuery,
    responses: { 200: { description: 'One page of subscriptions', schema: subscriptionListSchema } },
    handler: async ({ auth, query, res }) => {
      res.json(subscriptionListView(await subscriptions.list(auth, query)));
    },
  });

  api.route({
    method: 'get',
    path: '/api/v1/subscriptions/:subscriptionId',
    summary: 'An event subscription',
    description: "Requires Case: Read in the subscription's workspace. The secret is not shown.",
    tags,
    auth: true,
    params: subscriptionParams,
    responses: { 200: { description: 'The subscription', schema: subscriptionSchema }, 404: notFound },
    handler: async ({ auth, params, res }) => {
      res.json(subscriptionView(await subscriptions.get(auth, params.subscriptionId)));
    },
  });

  api.route({
    method: 'patch',
    path: '/api/v1/subscriptions/:subscriptionId',
    summary: 'Change, disable or enable an event subscription',
    description:
      "Requires Case: Full in the subscription's workspace. `enabled: false` stops new events (deliveries already under way keep retrying); other processes see a change within events.subscriberCacheMs.",
    tags,
    auth: true,
    params: subscriptionParams,
    body: subscriptionUpdateSchema,
    responses: {
      200: { description: 'The subscription as changed', schema: subscriptionSchema },
      400: refusedUrl,
      404: notFound,
    },
    handler: async ({ auth, params, body, res }) => {
      res.json(subscriptionView(await subscriptions.update(auth, params.subscriptionId, body)));
    },
  });

  api.route({
    method: 'delete',
    path: '/api/v1/subscriptions/:subscriptionId',
    summary: 'Delete an event subscription',
    description:
      "Requires Case: Full in the subscription's workspace. Deliveries still retrying end failed at their next attempt; the delivery log stays until retention removes it.",
    tags,
    auth: true,
    params: subscriptionParams,
    responses: { 204: { description: 'Deleted' }, 404: notFound },
    handler: async ({ auth, params, res }) => {
      await subscriptions.delete(auth, params.subscriptionId);
      res.status(204).end();
    },
  });

  api.route({
    method: 'post',
    path: '/api/v1/subscriptions/:subscriptionId/rotate-secret',
    summary: "Replace the subscription's signing secret",
    description:
      "Requires Case: Full in the subscription's workspace. The new secret is shown this once; the previous one keeps signing (as a second signature) until previousValidUntil (callbacks.secretRotationOverlapMs) so the receiver can switch without losing events.",
    tags,
    auth: true,
    params: subscriptionParams,
    responses: { 200: { description: 'The new secret', schema: rotatedSubscriptionSecretSchema }, 404: notFound },
    handler: async ({ auth, params, res }) => {
      noStore(res).json(rotatedSubscriptionSecretView(await subscriptions.rotateSecret(auth, params.subscriptionId)));
    },
  });

  api.route({
    method: 'get',
    path: '/api/v1/subscriptions/:subscriptionId/deliveries',
    summary: "The subscription's deliveries with every attempt",
    description: "Requires Case: Read in the subscription's workspace. Newest first, a page at a time (cursor).",
    tags,
    auth: true,
    params: subscriptionParams,
    query: subscriptionDeliveriesQuery,
    responses: { 200: { description: 'One page of deliveries', schema: subscriptionDeliveriesSchema }, 404: notFound },
    handler: async ({ auth, params, query, res }) => {
      const deliveries = await subscriptions.deliveries(auth, params.subscriptionId, query);
      res.json(subscriptionDeliveriesView(params.subscriptionId, deliveries));
    },
  });

  api.route({
    method: 'post',
    path: '/api/v1/subscriptions/:subscriptionId/deliveries/:deliveryId/redeliver',
    summary: 'Send one delivery of the subscription again',
    description:
      "Requires Case: Full in the subscription's workspace. A new delivery (new `webhook-id`, fresh retry schedule) of the same event to the subscription's current URL. Rate limited per subscription (callbacks.redeliverPerWorkspace per redeliverWindowMs).",
    tags,
    auth: true,
    params: subscriptionRedeliveryParams,
    responses: {
      202: { description: 'Redelivery started', schema: redeliveryStartedSchema },
      404: { description: 'The subscription or the delivery does not exist' },
      429: { description: 'Over the redelivery limit of the subscription; `Retry-After` says when to try again' },
    },
    handler: async ({ auth, params, res }) => {
      const redelivery = await subscriptions.redeliver(auth, params.subscriptionId, params.deliveryId, () =>
        takeRateLimit(res, rateLimits, 'redeliveries', [
          {
            name: 'subscription',
            key: `redeliver:subscription:${params.subscriptionId}`,
            limit: redeliverPerWorkspace,
            windowMs,
          },
        ]),
      );
      res.status(202).json(redeliveryStartedView(redelivery));
    },
  });
}
