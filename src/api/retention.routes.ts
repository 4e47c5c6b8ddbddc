import { z } from 'zod';
import type { AppContext } from '../context.js';
import { adminHeaders, requireAdmin } from './admin.routes.js';
import type { ApiRoutes } from './route.js';
import { errorBodySchema, uuid } from './schemas/common.js';
import { retentionPolicyBody, retentionPolicySchema } from './schemas/retention.js';

const orgParams = z.object({ organizationId: uuid });

/** Erasing a case on request, and the operator's retention policy per organization. */
export function registerRetentionRoutes(api: ApiRoutes, ctx: AppContext): void {
  const { retention } = ctx.services;

  api.route({
    method: 'delete',
    path: '/api/v1/case/:caseId',
    summary: 'Erase a case',
    description:
      "Requires Case: Full in the case's workspace. Erases the case with its node records, callback and event deliveries (with their attempts) and the files its nodes wrote; uploaded files stay. A case that has not ended (PENDING, RUNNING) is a 409: cancel it first. The Temporal history expires with the namespace retention.",
    tags: ['Cases'],
    auth: true,
    params: z.object({ caseId: uuid }),
    responses: {
      204: { description: 'Erased' },
      404: { description: 'The case does not exist' },
      409: { description: 'The case has not ended; cancel it first', schema: errorBodySchema },
    },
    handler: async ({ auth, params, res }) => {
      await retention.eraseCase(auth, params.caseId);
      res.status(204).end();
    },
  });

  const common = { tags: ['Operator'], auth: false as const, headers: adminHeaders };
  const responses = {
    200: { description: 'The policy in force', schema: retentionPolicySchema },
    401: { description: 'Missing or invalid admin token' },
    404: { description: 'The organization does not exist' },
  };

  api.route({
    ...common,
    method: 'get',
    path: '/admin/organizations/:organizationId/retention',
    summary: "An organization's retention policy",
    params: orgParams,
    responses,
    handler: async ({ req, res, params }) => {
      requireAdmin(ctx, req);
      res.json({ organizationId: params.organizationId, ...(await retention.policy(params.organizationId)) });
    },
  });

  api.route({
    ...common,
    method: 'put',
    path: '/admin/organizations/:organizationId/retention',
    summary: "Set an organization's retention policy",
    description:
      'Applied by the retention schedule (every retention.intervalMinutes) in batches of retention.batchSize cases.',
    params: orgParams,
    body: retentionPolicyBody,
    responses,
    handler: async ({ req, res, params, body }) => {
      requireAdmin(ctx, req);
      const policy = await retention.setPolicy(params.organizationId, body.keepDays, body.keepFailedDays);
      res.json({ organizationId: params.organizationId, ...policy });
    },
  });
}
