import { publicUrl } from '../config/config.js';
import type { AppContext } from '../context.js';
import { sendAnswer } from './idempotency.js';
import { takeRateLimit } from './rate-limits.js';
import { rawBytes } from './request-body.js';
import type { ApiRoutes } from './route.js';
import { errorBodySchema } from './schemas/common.js';
import {
  deliveryAcceptedSchema,
  deliveryBody,
  deliveryFinishedSchema,
  deliveryHeaders,
  hookCreateBody,
  hookListQuery,
  hookListSchema,
  hookParams,
  hookSchema,
  hookUpdateBody,
  hookWithSecretSchema,
  rotateBody,
  workflowHookParams,
} from './schemas/hooks.js';
import { deliveryView, hookListView, hookView, hookWithSecretView } from './views/hooks.js';

/** Inbound webhook triggers: managed with an API key, called by senders with a signature instead. */
export function registerHookRoutes(api: ApiRoutes, ctx: AppContext): void {
  const { hooks, rateLimits } = ctx.services;
  const tags = ['Webhook triggers'];
  // Read per request: the listening port is known only once the server listens (port 0 in tests).
  const baseUrl = () => publicUrl(ctx.config);
  const maxSync = ctx.config.hooks.maxSyncTimeoutMs;

  api.route({
    method: 'post',
    path: '/api/v1/workflow/:workflowId/hooks',
    summary: 'Create a webhook trigger',
    description:
      'A URL that starts a case of the workflow for each signed delivery, with inputs mapped from its JSON body and ' +
      "headers. Answers the hook with its secret, shown only here. Requires Workflow: Full and Case: Full in the workflow's " +
      'workspace; the mapping is checked against the inputs of the version a delivery would run now.',
    tags,
    auth: true,
    params: workflowHookParams,
    body: hookCreateBody(maxSync),
    responses: {
      201: { description: 'The hook and its secret', schema: hookWithSecretSchema },
      409: {
        description:
          'The workflow has no active version (the mapping cannot be checked), or the workspace holds hooks.maxPerWorkspace hooks (metadata.limit)',
        schema: errorBodySchema,
      },
    },
    handler: async ({ auth, params, body, res }) => {
      const created = await hooks.create(auth, params.workflowId, body);
      res.status(201).json(hookWithSecretView(created, baseUrl()));
    },
  });

  api.route({
    method: 'get',
    path: '/api/v1/workflow/:workflowId/hooks',
    summary: "List a workflow's webhook triggers",
    description: 'Newest first, a page at a time (cursor); never the secrets. Requires Workflow: Read.',
    tags,
    auth: true,
    params: workflowHookParams,
    query: hookListQuery,
    responses: { 200: { description: 'One page of hooks', schema: hookListSchema } },
    handler: async ({ auth, params, query, res }) => {
      res.json(hookListView(await hooks.list(auth, params.workflowId, query), baseUrl()));
    },
  });

  api.route({
    method: 'get',
    path: '/api/v1/hooks/:hookId',
    summary: 'A webhook trigger',
    tags,
    auth: true,
    params: hookParams,
    responses: { 200: { description: 'The hook (without its secret)', schema: hookSchema } },
    handler: async ({ auth, params, res }) => {
      res.json(hookView(await hooks.load(auth, params.hookId, 'workflow:read'), baseUrl()));
    },
  });

  api.route({
    method: 'patch',
    path: '/api/v1/hooks/:hookId',
    summary: 'Change, disable or enable a webhook trigger',
    description:
      'enabled: false makes deliveries answer 404 and start nothing. Requires Workflow: Full, and Case: Full for any change but a new name or disabling (the hook starts cases).',
    tags,
    auth: true,
    params: hookParams,
    body: hookUpdateBody(maxSync),
    responses: {
      200: { description: 'The hook after the change', schema: hookSchema },
      409: {
        description: 'A new mapping cannot be checked: the workflow has no active version',
        schema: errorBodySchema,
      },
    },
    handler: async ({ auth, params, body, res }) => {
      res.json(hookView(await hooks.update(auth, params.hookId, body), baseUrl()));
    },
  });

  api.route({
    method: 'post',
    path: '/api/v1/hooks/:hookId/rotate-secret',
    summary: "Rotate a webhook trigger's secret",
    description:
      'A new secret, shown only in this answer; the old one keeps verifying for graceSeconds so the sender can switch ' +
      'without refused deliveries. Requires Workflow: Full and Case: Full (the secret starts cases).',
    tags,
    auth: true,
    params: hookParams,
    body: rotateBody,
    responses: {
      200: { description: 'The hook and its new secret', schema: hookWithSecretSchema },
      409: { description: 'Another rotation happened at the same time', schema: errorBodySchema },
    },
    handler: async ({ auth, params, body, res }) => {
      res.json(hookWithSecretView(await hooks.rotate(auth, params.hookId, body.graceSeconds), baseUrl()));
    },
  });

  api.route({
    method: 'delete',
    path: '/api/v1/hooks/:hookId',
    summary: 'Delete a webhook trigger',
    description: 'Deliveries to its URL answer 404 from now on; cases it started stay. Requires Workflow: Full.',
    tags,
    auth: true,
    params: hookParams,
    responses: { 204: { description: 'Deleted' } },
    handler: async ({ auth, params, res }) => {
      await hooks.delete(auth, params.hookId);
      res.status(204).end();
    },
  });

  api.route({
    method: 'post',
    path: '/hooks/:hookId',
    summary: 'Deliver an event to a webhook trigger',
    description:
      "No API key: the delivery is signed with the hook's secret under its scheme. Starts one case of the hook's " +
      'workflow. A delivery whose webhook-id, X-GitHub-Delivery or Idempotency-Key was seen in the last 24 hours gets ' +
      "the first answer again (Idempotency-Replayed: true) and starts nothing. Counted against the hook's rate limit " +
      '(RateLimit and RateLimit-Policy headers); the body is limited to hooks.maxPayloadBytes.',
    tags,
    auth: false,
    params: hookParams,
    headers: deliveryHeaders,
    body: deliveryBody,
    validateBody: false,
    responses: {
      200: { description: 'sync hooks: the case ended within the bound; its results', schema: deliveryFinishedSchema },
      202: { description: 'The case started (async, or sync past its bound)', schema: deliveryAcceptedSchema },
      400: {
        description: 'Not JSON, or it does not map to valid inputs (metadata.fields names them)',
        schema: errorBodySchema,
      },
      401: {
        description: 'Missing or wrong signature, or a signed timestamp outside the tolerance',
        schema: errorBodySchema,
      },
      403: {
        description: 'The key that created the hook was revoked or expired, or its user left the organization',
        schema: errorBodySchema,
      },
      404: { description: 'No such hook, or it is disabled', schema: errorBodySchema },
      409: {
        description: 'The delivery id was used with another body, or its first delivery is still running',
        schema: errorBodySchema,
      },
      429: { description: "Over the hook's rate limit (Retry-After)", schema: errorBodySchema },
      503: { description: 'The workflow engine is unavailable; nothing was started', schema: errorBodySchema },
    },
    handler: async ({ params, req, res }) => {
      const hook = await hooks.receiving(params.hookId);
      await takeRateLimit(res, rateLimits, 'deliveries to this hook', [hooks.quota(hook)]);
      const delivery = { rawBody: rawBytes(req.body), header: (name: string) => req.get(name) };
      sendAnswer(res, await hooks.deliver(hook, delivery, (outcome) => deliveryView(hook.id, outcome)));
    },
  });
}
