import { z } from 'zod';
import type { AppContext } from '../context.js';
import { adminHeaders, requireAdmin } from './admin.routes.js';
import type { ApiRoutes } from './route.js';
import { uuid } from './schemas/common.js';
import { concurrencyPolicyBody, concurrencyPolicySchema } from './schemas/concurrency.js';

const orgParams = z.object({ organizationId: uuid });

/** The operator's concurrency cap per organization (docs/concurrency.md). */
export function registerConcurrencyRoutes(api: ApiRoutes, ctx: AppContext): void {
  const { admission } = ctx.services;
  const common = { tags: ['Operator'], auth: false as const, headers: adminHeaders, params: orgParams };
  const path = '/admin/organizations/:organizationId/concurrency';
  const responses = {
    200: { description: 'The cap in force and the slots now', schema: concurrencyPolicySchema },
    401: { description: 'Missing or invalid admin token' },
    404: { description: 'The organization does not exist' },
  };

  api.route({
    ...common,
    method: 'get',
    path,
    summary: "An organization's concurrency cap",
    responses,
    handler: async ({ req, res, params }) => {
      requireAdmin(ctx, req);
      res.json({ organizationId: params.organizationId, ...(await admission.policy(params.organizationId)) });
    },
  });

  api.route({
    ...common,
    method: 'put',
    path,
    summary: "Set an organization's concurrency cap",
    description:
      'Overrides cases.maxConcurrentPerOrganization for this organization. A raised cap lets queued cases in within cases.admissionIntervalMs; a lowered one stops nothing that runs.',
    body: concurrencyPolicyBody,
    responses,
    handler: async ({ req, res, params, body }) => {
      requireAdmin(ctx, req);
      const policy = await admission.setPolicy(params.organizationId, body.maxConcurrentCases);
      res.json({ organizationId: params.organizationId, ...policy });
    },
  });

  api.route({
    ...common,
    method: 'delete',
    path,
    summary: "Drop an organization's own concurrency cap",
    description: 'The configured default (cases.maxConcurrentPerOrganization) applies again.',
    responses,
    handler: async ({ req, res, params }) => {
      requireAdmin(ctx, req);
      res.json({
        organizationId: params.organizationId,
        ...(await admission.setPolicy(params.organizationId, undefined)),
      });
    },
  });
}
