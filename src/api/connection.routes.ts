import { z } from 'zod';
import type { ConnectOutcome } from '../connections/connection-service.js';
import type { Connection } from '../domain/connections.js';
import type { AppContext } from '../context.js';
import { readableBody } from './request-body.js';
import { parseOrThrow, type ApiRoutes } from './route.js';
import {
  connectBody,
  connectionListQuery,
  connectionListResponse,
  connectionResponse,
  connectResponse,
} from './schemas/connection.js';
import { uuid } from './schemas/common.js';

function toConnection(c: Connection): z.infer<typeof connectionResponse> {
  return {
    id: c.id,
    name: c.name,
    description: c.description,
    status: c.status,
    workspaceId: c.workspaceId,
    integrationId: c.integrationId,
    integrationVersionId: c.integrationVersionId,
    actionVersionId: c.actionVersionId,
    activeCredentialId: c.credentialId,
    testActionVersionId: c.testActionVersionId,
    testPassed: c.testPassed,
    testError: c.testError,
    createdAt: c.createdAt,
    revokedAt: c.revokedAt,
  };
}

function toConnectResponse({
  connection,
  testPassed,
  testError,
  authorization,
}: ConnectOutcome): z.infer<typeof connectResponse> {
  return {
    status: authorization ? 'pending_authorization' : 'connected',
    // A re-authorized connection keeps the id workflows already name; a new one has none until authorized.
    activeIntegrationId: connection.status === 'pending_authorization' ? null : connection.id,
    activeIntegrationVersionId: connection.integrationVersionId,
    activeCredentialId: connection.credentialId,
    workspaceId: connection.workspaceId,
    testPassed,
    testError,
    authorizationUrl: authorization?.authorizationUrl ?? null,
    connectionToken: authorization?.connectionToken ?? null,
  };
}

const connectionParams = z.object({ connectionId: uuid.meta({ description: 'The activeIntegrationId' }) });
const workspaceParams = z.object({ workspaceId: uuid });
const notFound = { 404: { description: 'The connection does not exist' } };

/** The body's connection.workspaceId, read without trusting the body's shape (the permission check comes first). */
function workspaceIdOf(body: unknown): unknown {
  const connection =
    typeof body === 'object' && body !== null ? (body as { connection?: unknown }).connection : undefined;
  return typeof connection === 'object' && connection !== null
    ? (connection as { workspaceId?: unknown }).workspaceId
    : undefined;
}

export function registerConnectionRoutes(api: ApiRoutes, ctx: AppContext): void {
  const { connections } = ctx.services;

  api.route({
    auth: true,
    validateBody: false,
    tags: ['Connections'],
    method: 'post',
    path: '/api/v1/integration/connect',
    summary: 'Connect an integration into a workspace',
    description:
      'Stores the credential (checked against the template, encrypted, never returned) and creates a connection; with ' +
      "testActionVersionId the action's endpoint is called with the credential (2xx/3xx pass). An oauth credential answers " +
      'pending_authorization with an authorizationUrl for a person to open and a connectionToken (10 minutes) to check the ' +
      'outcome with. Requires Integration: Full in the workspace, checked before the body. Not idempotent. See docs/connections.md.',
    body: connectBody,
    responses: {
      201: { description: 'Connected (or pending_authorization for OAuth)', schema: connectResponse },
      400: {
        description:
          'Missing or malformed field (other than workspaceId), neither credentialVersionId nor activeCredentialId, credentialData with activeCredentialId, credentialData over 100 fields or 64 KB',
      },
      403: {
        description:
          'Integration: Full missing in the workspace, or a workspaceId that is not one of the key’s (not a UUID, unknown, another organization’s)',
      },
      404: {
        description:
          'integrationVersionId, actionVersionId, credentialVersionId, testActionVersionId or activeCredentialId does not exist (nothing is created)',
      },
      422: {
        description:
          'credentialData does not match the template, is missing, or an OAuth credential lacks client_id/client_secret/authorization_url/token_url; ids of different integrations; inactive template or integration',
      },
    },
    handler: async ({ req, res, auth }) => {
      // An unreadable body names no workspace to check: its error (400/413) is the answer.
      const workspace = await connections.requireConnectWorkspace(auth, workspaceIdOf(readableBody(req.body)));
      const body = parseOrThrow(connectBody, req.body, 'body');
      res.status(201).json(toConnectResponse(await connections.connect(auth, workspace, body.connection)));
    },
  });

  api.route({
    auth: true,
    tags: ['Connections'],
    method: 'get',
    path: '/api/v1/workspace/:workspaceId/connections',
    summary: "List a workspace's connections",
    description: 'Newest first; no secret values. Requires Integration: Read in the workspace.',
    params: workspaceParams,
    query: connectionListQuery,
    responses: {
      200: { description: 'The connections', schema: connectionListResponse },
      400: { description: 'Malformed workspaceId or paging' },
      403: { description: 'No access to the workspace or Integration: Read missing' },
      404: { description: 'The workspace does not exist' },
    },
    handler: async ({ res, auth, params, query }) => {
      const list = await connections.list(auth, params.workspaceId, query);
      res.json({ connections: list.map(toConnection), limit: query.limit, offset: query.offset });
    },
  });

  api.route({
    auth: true,
    tags: ['Connections'],
    method: 'get',
    path: '/api/v1/connection/:connectionId',
    summary: 'Read a connection',
    description: 'No secret values. Requires Integration: Read in its workspace.',
    params: connectionParams,
    responses: {
      200: { description: 'The connection', schema: connectionResponse },
      400: { description: 'Malformed connectionId' },
      403: { description: 'No access to its workspace or Integration: Read missing' },
      ...notFound,
    },
    handler: async ({ res, auth, params }) => {
      res.json(toConnection(await connections.get(auth, params.connectionId)));
    },
  });

  api.route({
    auth: true,
    tags: ['Connections'],
    method: 'post',
    path: '/api/v1/connection/:connectionId/reauthorize',
    summary: 'Re-authorize an OAuth connection in place',
    description:
      'Starts a new authorization of the same connection and credential (after the provider refused its refresh token, ' +
      'to change scopes, or after an attempt expired): the answer is the Connect response, pending_authorization with a new ' +
      'authorizationUrl and 10-minute connectionToken; the connection keeps its id and, until the person authorizes, its ' +
      'status. Requires Integration: Full in its workspace. See docs/connections.md.',
    params: connectionParams,
    responses: {
      201: { description: 'A new authorization attempt', schema: connectResponse },
      400: { description: 'Malformed connectionId' },
      403: { description: 'No access to its workspace or Integration: Full missing' },
      ...notFound,
      422: { description: 'The connection is revoked or does not use an OAuth credential' },
    },
    handler: async ({ res, auth, params }) => {
      res.status(201).json(toConnectResponse(await connections.reauthorize(auth, params.connectionId)));
    },
  });

  api.route({
    auth: true,
    tags: ['Connections'],
    method: 'post',
    path: '/api/v1/connection/:connectionId/revoke',
    summary: 'Revoke a connection',
    description:
      'For good: integration_action nodes naming it fail from then on and workflows naming it no longer save. Repeating it answers the same. Requires Integration: Full in its workspace.',
    params: connectionParams,
    responses: {
      200: { description: 'The revoked connection', schema: connectionResponse },
      400: { description: 'Malformed connectionId' },
      403: { description: 'No access to its workspace or Integration: Full missing' },
      ...notFound,
    },
    handler: async ({ res, auth, params }) => {
      res.json(toConnection(await connections.revoke(auth, params.connectionId)));
    },
  });
}
