import type { NextFunction, Request, Response } from 'express';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { TenancyError } from '../tenancy/tenancy-service.js';
import {
  addMemberInput,
  createKeyInput,
  createOrganizationInput,
  createUserInput,
  createWorkspaceInput,
  keyViewSchema,
} from '../tenancy/schemas.js';
import { DomainError } from '../errors.js';
import { bearerMatches } from './bearer.js';
import type { ApiRoutes } from './route.js';
import { uuid } from './schemas/common.js';

const organizationSchema = z.object({ id: z.string(), name: z.string(), verified: z.boolean(), createdAt: z.string() });
const workspaceSchema = z.object({
  id: z.string(),
  organizationId: z.string(),
  name: z.string(),
  createdAt: z.string(),
});
const userSchema = z.object({ id: z.string(), email: z.string(), name: z.string(), createdAt: z.string() });
const membershipSchema = z.object({
  organizationId: z.string(),
  userId: z.string(),
  role: z.string(),
  createdAt: z.string(),
});
const orgParams = z.object({ organizationId: uuid });
export const adminHeaders = z.object({
  authorization: z.string().meta({ description: 'Bearer <CASEFLOW_ADMIN_TOKEN>' }),
});

/** The operator area: present only when CASEFLOW_ADMIN_TOKEN is set; the token comes as a bearer header. */
export function requireAdmin(ctx: AppContext, req: Request): void {
  const token = ctx.config.adminToken;
  if (!token) throw DomainError.notFound(`No route for ${req.method} ${req.path}`);
  if (!bearerMatches(req, token)) throw DomainError.unauthorized('Missing or invalid admin token');
}

/**
 * Mounted before the JSON body parser: an unauthenticated request to /admin/* is refused without
 * its body being read, so an anonymous caller cannot make the service buffer and parse large bodies.
 */
export function adminGate(ctx: AppContext): (req: Request, res: Response, next: NextFunction) => void {
  return (req, _res, next) => {
    if (req.path === '/admin' || req.path.startsWith('/admin/')) requireAdmin(ctx, req);
    next();
  };
}

const operatorErrors = { 401: { description: 'Missing or invalid admin token' } };
/** What tenancyCall turns the service's refusals into (its 400 is implied by the route's inputs). */
const tenancyErrors = {
  ...operatorErrors,
  404: { description: 'A named organization, user or key does not exist' },
  409: { description: 'Conflicts with an existing record' },
};

async function tenancyCall<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (!(err instanceof TenancyError)) throw err;
    if (err.kind === 'not_found') throw DomainError.notFound(err.message);
    if (err.kind === 'conflict') throw DomainError.conflict(err.message);
    throw DomainError.badRequest(err.message);
  }
}

export function registerAdminRoutes(api: ApiRoutes, ctx: AppContext): void {
  const service = ctx.services.tenancy;
  const common = { tags: ['Operator'], auth: false as const, headers: adminHeaders };

  api.route({
    ...common,
    method: 'post',
    path: '/admin/organizations',
    summary: 'Create an organization',
    body: createOrganizationInput,
    responses: { 201: { description: 'Created', schema: organizationSchema }, ...operatorErrors },
    handler: async ({ req, res, body }) => {
      requireAdmin(ctx, req);
      res.status(201).json(await service.createOrganization(body));
    },
  });
  api.route({
    ...common,
    method: 'get',
    path: '/admin/organizations',
    summary: 'List organizations',
    responses: {
      200: { description: 'Organizations', schema: z.object({ organizations: z.array(organizationSchema) }) },
      ...operatorErrors,
    },
    handler: async ({ req, res }) => {
      requireAdmin(ctx, req);
      res.json({ organizations: await service.listOrganizations() });
    },
  });
  api.route({
    ...common,
    method: 'post',
    path: '/admin/organizations/:organizationId/verify',
    summary: 'Mark an organization verified (allowed to author the catalog)',
    params: orgParams,
    body: z.object({ verified: z.boolean().default(true) }),
    responses: { 204: { description: 'Done' }, ...tenancyErrors },
    handler: async ({ req, res, params, body }) => {
      requireAdmin(ctx, req);
      await tenancyCall(() => service.setVerified(params.organizationId, body.verified));
      res.status(204).end();
    },
  });
  api.route({
    ...common,
    method: 'post',
    path: '/admin/organizations/:organizationId/workspaces',
    summary: 'Create a workspace',
    params: orgParams,
    body: createWorkspaceInput,
    responses: { 201: { description: 'Created', schema: workspaceSchema }, ...tenancyErrors },
    handler: async ({ req, res, params, body }) => {
      requireAdmin(ctx, req);
      res.status(201).json(await tenancyCall(() => service.createWorkspace(params.organizationId, body)));
    },
  });
  api.route({
    ...common,
    method: 'get',
    path: '/admin/organizations/:organizationId/workspaces',
    summary: 'List workspaces',
    params: orgParams,
    responses: {
      200: { description: 'Workspaces', schema: z.object({ workspaces: z.array(workspaceSchema) }) },
      ...tenancyErrors,
    },
    handler: async ({ req, res, params }) => {
      requireAdmin(ctx, req);
      res.json({ workspaces: await tenancyCall(() => service.listWorkspaces(params.organizationId)) });
    },
  });
  api.route({
    ...common,
    method: 'post',
    path: '/admin/users',
    summary: 'Create a user (optionally as a member of an organization)',
    body: createUserInput,
    responses: { 201: { description: 'Created', schema: userSchema }, ...tenancyErrors },
    handler: async ({ req, res, body }) => {
      requireAdmin(ctx, req);
      res.status(201).json(await tenancyCall(() => service.createUser(body)));
    },
  });
  api.route({
    ...common,
    method: 'get',
    path: '/admin/users',
    summary: 'List users, optionally the members of one organization',
    query: z.object({ organizationId: uuid.optional() }),
    responses: { 200: { description: 'Users', schema: z.object({ users: z.array(userSchema) }) }, ...operatorErrors },
    handler: async ({ req, res, query }) => {
      requireAdmin(ctx, req);
      res.json({ users: await service.listUsers(query.organizationId) });
    },
  });
  api.route({
    ...common,
    method: 'post',
    path: '/admin/organizations/:organizationId/members',
    summary: 'Add a member',
    params: orgParams,
    body: addMemberInput,
    responses: { 201: { description: 'Added', schema: membershipSchema }, ...tenancyErrors },
    handler: async ({ req, res, params, body }) => {
      requireAdmin(ctx, req);
      res.status(201).json(await tenancyCall(() => service.addMember(params.organizationId, body)));
    },
  });
  api.route({
    ...common,
    method: 'delete',
    path: '/admin/organizations/:organizationId/members/:userId',
    summary: 'Remove a member (their keys stop working in this organization)',
    params: z.object({ organizationId: uuid, userId: uuid }),
    responses: { 204: { description: 'Removed' }, ...tenancyErrors },
    handler: async ({ req, res, params }) => {
      requireAdmin(ctx, req);
      await tenancyCall(() => service.removeMember(params.organizationId, params.userId));
      res.status(204).end();
    },
  });
  api.route({
    ...common,
    method: 'post',
    path: '/admin/keys',
    summary: 'Create an API key (the key is in this response only)',
    body: createKeyInput,
    responses: {
      201: { description: 'Created', schema: z.object({ key: z.string(), apiKey: keyViewSchema }) },
      ...tenancyErrors,
    },
    handler: async ({ req, res, body }) => {
      requireAdmin(ctx, req);
      const created = await tenancyCall(() => service.createKey(body));
      res.status(201).json({ key: created.key, apiKey: created.view });
    },
  });
  api.route({
    ...common,
    method: 'get',
    path: '/admin/organizations/:organizationId/keys',
    summary: 'List the keys of an organization (never the secrets)',
    params: orgParams,
    responses: { 200: { description: 'Keys', schema: z.object({ keys: z.array(keyViewSchema) }) }, ...tenancyErrors },
    handler: async ({ req, res, params }) => {
      requireAdmin(ctx, req);
      res.json({ keys: await tenancyCall(() => service.listKeys(params.organizationId)) });
    },
  });
  api.route({
    ...common,
    method: 'post',
    path: '/admin/keys/:keyId/revoke',
    summary: 'Revoke an API key',
    params: z.object({ keyId: uuid }),
    responses: { 204: { description: 'Revoked' }, ...tenancyErrors },
    handler: async ({ req, res, params }) => {
      requireAdmin(ctx, req);
      await tenancyCall(() => service.revokeKey(params.keyId));
      res.status(204).end();
    },
  });
}
