import { randomUUID } from 'node:crypto';
import type { Response } from 'express';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import type { AuthContext } from '../auth/auth-context.js';
import { assertWorkspaceGrant, requireWorkspaceGrant } from '../auth/access.js';
import type { Grant } from '../auth/grants.js';
import { RedeliverLimiter } from './redeliver-limit.js';
import { WebhookSecrets, type WorkspaceWebhookSecret } from '../callbacks/webhook-secrets.js';
import { secretBoxFromConfig } from '../crypto/secret-box.js';
import { CallbackRepo, type CallbackDelivery } from '../store/callback-repo.js';
import { CaseRepo } from '../store/case-repo.js';
import type { CallbackDeliveryInput } from '../../workflows/callback-delivery.js';
import { DomainError } from '../errors.js';
import type { ApiRoutes } from './route.js';
import { uuid } from './schemas/common.js';

const caseParams = z.object({ caseId: uuid });
const workspaceParams = z.object({ workspaceId: uuid });

const attemptSchema = z.object({
  attempt: z.number().int().meta({ description: '1-based attempt number' }),
  startedAt: z.string(),
  durationMs: z.number().int(),
  responseStatus: z.number().int().nullable().meta({ description: 'HTTP status; null when no response came (refused, timed out)' }),
  responseBody: z.string().nullable().meta({ description: 'First 1 KB of the response body' }),
  error: z.string().nullable(),
});

const deliverySchema = z.object({
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

const secretSchema = z.object({
  workspaceId: z.string(),
  secret: z.string().meta({ description: 'Standard Webhooks signing secret (`whsec_` + base64)' }),
  createdAt: z.string(),
  previousValidUntil: z.string().nullable().meta({ description: 'Until when callbacks also carry a signature made with the previous secret' }),
});

/** Secrets must not sit in shared caches or browser history. */
function sendSecret(res: Response, secret: WorkspaceWebhookSecret): void {
  res.setHeader('cache-control', 'no-store');
  res.json(secret);
}

/**
 * Callback deliveries of a case (read, redeliver) and the workspace's
 * webhook signing secret (read, rotate).
 */
export function registerCallbackRoutes(api: ApiRoutes, ctx: AppContext): void {
  const repo = new CallbackRepo(ctx.store.db);
  const cases = new CaseRepo(ctx.store.db);
  const limiter = new RedeliverLimiter(ctx.config.callbacks);
  const secrets = () => new WebhookSecrets(repo, secretBoxFromConfig(ctx.config), ctx.config.callbacks.secretRotationOverlapMs);

  /**
   * The case's deliveries after checking the grant in the case's workspace:
   * the case record's workspace, or for deliveries whose case record is gone,
   * the workspace the deliveries were made for. 404 when neither exists.
   */
  async function authorizedDeliveries(auth: AuthContext, caseId: string, grant: Grant): Promise<{ workspaceId: string; deliveries: CallbackDelivery[] }> {
    const deliveries = await repo.listDeliveries(caseId);
    const workspaceId = (await cases.find(caseId))?.workspaceId ?? deliveries[0]?.workspaceId;
    const workspace = workspaceId === undefined ? undefined : await ctx.tenancy.findWorkspace(workspaceId);
    // Another organization's case does not exist for this caller, as on the other case routes.
    if (!workspace || workspace.organizationId !== auth.organizationId) throw DomainError.notFound(`Case ${caseId} does not exist`);
    assertWorkspaceGrant(auth, workspace, grant);
    return { workspaceId: workspace.id, deliveries };
  }

  api.route({
    method: 'get',
    path: '/api/v1/case/:caseId/callbacks',
    summary: "List a case's callback deliveries with every attempt",
    description: 'Requires Case: Read in the case\'s workspace. Deliveries oldest first (the case run\'s own, then redeliveries); attempts in order.',
    tags: ['Callbacks'],
    auth: true,
    params: caseParams,
    responses: {
      200: { description: 'Deliveries', schema: z.object({ caseId: z.string(), deliveries: z.array(deliverySchema) }) },
      404: { description: 'The case does not exist' },
    },
    handler: async ({ res, params, auth }) => {
      const { deliveries } = await authorizedDeliveries(auth, params.caseId, 'case:read');
      const attempts = await repo.listAttempts(deliveries.map((d) => d.id));
      res.json({
        caseId: params.caseId,
        deliveries: deliveries.map((d) => ({
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
        })),
      });
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
      202: { description: 'Redelivery started', schema: z.object({ deliveryId: z.string(), workflowId: z.string(), status: z.literal('pending') }) },
      404: { description: 'The case does not exist' },
      409: { description: 'The case has no callback to redeliver, or another redelivery is starting' },
      429: { description: 'Over the redelivery limit of the case or of its workspace (callbacks.redeliverPerCase / redeliverPerWorkspace per redeliverWindowMs); `Retry-After` says when to try again' },
    },
    handler: async ({ res, params, auth }) => {
      const { workspaceId, deliveries } = await authorizedDeliveries(auth, params.caseId, 'case:full');
      const last = deliveries.at(-1);
      if (!last) throw DomainError.conflict(`Case ${params.caseId} has no callback to redeliver`);
      // Over the limit, the error carries its RateLimit and Retry-After headers to the error handler.
      res.set(await limiter.take(workspaceId, params.caseId));
      const deliveryId = randomUUID();
      const workflowId = `callback-${params.caseId}-redeliver-${deliveries.length}`;
      // The row first, so the delivery is listed as soon as this answers; the workflow's own insert is then a no-op.
      await repo.createDelivery({ id: deliveryId, caseId: params.caseId, workspaceId, url: last.url, body: last.body, workflowId });
      const input: CallbackDeliveryInput = {
        deliveryId,
        caseId: params.caseId,
        workspaceId,
        callbackUrl: last.url,
        body: JSON.parse(last.body) as CallbackDeliveryInput['body'],
      };
      try {
        await ctx.temporal.client.workflow.start('callbackDelivery', { taskQueue: ctx.temporal.taskQueue, workflowId, args: [input] });
      } catch (err) {
        await repo.deleteDelivery(deliveryId);
        if (err instanceof WorkflowExecutionAlreadyStartedError) {
          throw DomainError.conflict('Another redelivery of this case is starting; try again');
        }
        throw err;
      }
      res.status(202).json({ deliveryId, workflowId, status: 'pending' });
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
    responses: { 200: { description: 'The secret', schema: secretSchema }, 404: { description: 'The workspace does not exist' } },
    handler: async ({ res, params, auth }) => {
      await requireWorkspaceGrant(ctx.tenancy, auth, params.workspaceId, 'case:full');
      sendSecret(res, await secrets().current(params.workspaceId));
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
    responses: { 200: { description: 'The new secret', schema: secretSchema }, 404: { description: 'The workspace does not exist' } },
    handler: async ({ res, params, auth }) => {
      await requireWorkspaceGrant(ctx.tenancy, auth, params.workspaceId, 'case:full');
      sendSecret(res, await secrets().rotate(params.workspaceId));
    },
  });
}
