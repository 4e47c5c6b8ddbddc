import type { Response } from 'express';
import { z } from 'zod';
import type { WorkspaceWebhookSecret } from '../callbacks/webhook-secrets.js';
import type { AppContext } from '../context.js';
import { takeRateLimit } from './rate-limits.js';
import type { ApiRoutes } from './route.js';
import { deliveriesSchema, redeliveryStartedSchema, webhookSecretSchema } from './schemas/callbacks.js';
import { uuid } from './schemas/common.js';
import { deliveriesView, redeliveryStartedView, webhookSecretView } from './views/callbacks.js';

const caseParams = z.object({ caseId: uuid });
const workspaceParams = z.object({ workspaceId: uuid });

/** Secrets must not sit in shared caches or browser history. */
function sendSecret(res: Response, secret: WorkspaceWebhookSecret): void {
  res.setHeader('cache-control', 'no-store');
  res.json(webhookSecretView(secret));
}

/**
 * Callback deliveries of a case (read, redeliver) and the workspace's
 * webhook signing secret (read, rotate).
 */
export function registerCallbackRoutes(api: ApiRoutes, ctx: AppContext): void {
  const { callbacks, rateLimits } = ctx.services;
  const { redeliverWindowMs: windowMs, redeliverPerCase, redeliverPerWorkspace } = ctx.config.callbacks;

  api.route({
    method: 'get',
    path: '/api/v1/case/:caseId/callbacks',
    summary: "List a case's callback deliveries with every attempt",
    description:
      "Requires Case: Read in the case's workspace. Deliveries oldest first (the case run's own, then redeliveries); attempts in order.",
    tags: ['Callbacks'],
    auth: true,
    params: caseParams,
    responses: {
      200: { description: 'Deliveries', schema: deliveriesSchema },
      404: { description: 'The case does not exist' },
    },
    handler: async ({ res, params, auth }) => {
      res.json(deliveriesView(params.caseId, await callbacks.listDeliveries(auth, params.caseId)));
    },
  });

  api.route({
    method: 'post',
    path: '/api/v1/case/:caseId/callbacks/redeliver',
    summary: "Send the case's last callback again, as a new delivery",
    description:
      "Requires Case: Full in the case's workspace. Rate limited per case and per workspace (`RateLimit` / `RateLimit-Policy` headers, 429 with `Retry-After`). Re-sends the body and URL of the case's latest delivery as a new delivery (new `webhook-id`, fresh retry schedule). 409 when the case has no delivery yet.",
    tags: ['Callbacks'],
    auth: true,
    params: caseParams,
    responses: {
      202: { description: 'Redelivery started', schema: redeliveryStartedSchema },
      404: { description: 'The case does not exist' },
      409: { description: 'The case has no callback to redeliver, or another redelivery is starting' },
      429: {
        description:
          'Over the redelivery limit of the case or of its workspace (callbacks.redeliverPerCase / redeliverPerWorkspace per redeliverWindowMs); `Retry-After` says when to try again',
      },
    },
    handler: async ({ res, params, auth }) => {
      const redelivery = await callbacks.redeliver(auth, params.caseId, (workspaceId) =>
        takeRateLimit(res, rateLimits, 'redeliveries', [
          { name: 'case', key: `redeliver:case:${params.caseId}`, limit: redeliverPerCase, windowMs },
          { name: 'workspace', key: `redeliver:workspace:${workspaceId}`, limit: redeliverPerWorkspace, windowMs },
        ]),
      );
      res.status(202).json(redeliveryStartedView(redelivery));
    },
  });

  const secretDescription =
    "Requires Case: Full in the workspace: the secret lets its holder forge callbacks, so read-only keys do not see it. Created on first use; shown to authorized callers like Svix's dashboard does, because receivers need it to verify.";

  api.route({
    method: 'get',
    path: '/api/v1/workspace/:workspaceId/webhook-secret',
    summary: "The workspace's callback signing secret",
    description: secretDescription,
    tags: ['Callbacks'],
    auth: true,
    params: workspaceParams,
    responses: {
      200: { description: 'The secret', schema: webhookSecretSchema },
      404: { description: 'The workspace does not exist' },
    },
    handler: async ({ res, params, auth }) => {
      sendSecret(res, await callbacks.webhookSecret(auth, params.workspaceId));
    },
  });

  api.route({
    method: 'post',
    path: '/api/v1/workspace/:workspaceId/webhook-secret/rotate',
    summary: "Replace the workspace's callback signing secret",
    description: `${secretDescription} The previous secret keeps signing (as a second signature) for the configured overlap (24 h by default) so receivers can switch without losing callbacks.`,
    tags: ['Callbacks'],
    auth: true,
    params: workspaceParams,
    responses: {
      200: { description: 'The new secret', schema: webhookSecretSchema },
      404: { description: 'The workspace does not exist' },
    },
    handler: async ({ res, params, auth }) => {
      sendSecret(res, await callbacks.rotateWebhookSecret(auth, params.workspaceId));
    },
  });
}
