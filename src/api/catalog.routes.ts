import { z } from 'zod';
import type { AppContext } from '../context.js';
import { toAction, toCreated, toCredential, toDetail, toIntegration, toProvider } from './catalog.views.js';
import { parseOrThrow, type ApiRoutes } from './route.js';
import {
  actionBody,
  actionContent,
  credentialContent,
  actionResponse,
  actionUpdateBody,
  credentialBody,
  credentialResponse,
  credentialUpdateBody,
  idempotencyHeaders,
  integrationBody,
  integrationDraft,
  integrationCreatedResponse,
  integrationDetailResponse,
  integrationListQuery,
  integrationListResponse,
  integrationResponse,
  integrationUpdateBody,
  providerBody,
  providerListResponse,
  providerResponse,
} from './schemas/catalog.js';
import { uuid } from './schemas/common.js';

/** Path ids are documented as UUIDs and checked in the handler, after the permission check. */
const idParam = (name: string, description: string) => z.object({ [name]: uuid.meta({ description }) });
const parseId = (value: unknown, name: string): string => parseOrThrow(uuid, value, `path.${name}`);
function parseBody<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  return parseOrThrow(schema, body ?? {}, 'body');
}

const authorErrors = {
  403: {
    description:
      'Key not organization-scoped, Integration: Full missing, or organization not verified (checked before the body)',
  },
};
const readerErrors = { 403: { description: 'Integration: Read missing' } };
const scanErrors = {
  400: {
    description: 'Invalid body, a value over its limit, or action code security-scan violations (metadata.violations)',
  },
  503: { description: 'The code scanner is unavailable; retry' },
};

export function registerCatalogRoutes(api: ApiRoutes, ctx: AppContext): void {
  const { catalog } = ctx.services;
  const common = { auth: true as const, validateParams: false, validateBody: false };

  api.route({
    ...common,
    tags: ['Providers'],
    method: 'post',
    path: '/api/v1/provider',
    summary: 'Create a provider',
    description: "A provider of the key's organization; integrations name one as `providerId`.",
    body: providerBody,
    responses: {
      201: { description: 'Created', schema: providerResponse },
      400: { description: 'Invalid body' },
      ...authorErrors,
    },
    handler: async ({ req, res, auth }) => {
      catalog.requireAuthor(auth);
      const body = parseBody(providerBody, req.body);
      res.status(201).json(toProvider(await catalog.createProvider(auth, body.name)));
    },
  });

  api.route({
    ...common,
    tags: ['Providers'],
    method: 'get',
    path: '/api/v1/provider',
    summary: "List the providers of the key's organization",
    responses: { 200: { description: 'Oldest first', schema: providerListResponse }, ...readerErrors },
    handler: async ({ res, auth }) => {
      catalog.requireReader(auth);
      res.json({ providers: (await catalog.listProviders(auth)).map(toProvider) });
    },
  });

  api.route({
    ...common,
    tags: ['Integrations'],
    method: 'post',
    path: '/api/v1/integration',
    summary: 'Create an integration with its actions and credential',
    description:
      "All or nothing: the integration, its actions and its credential are written in one transaction, after every action's code passed the scan. " +
      'With an `Idempotency-Key`, a retry returns the first result instead of creating a duplicate.',
    headers: idempotencyHeaders,
    body: integrationBody,
    responses: {
      201: {
        description: 'Created (or, with Idempotency-Replayed: true, the first result of this key)',
        schema: integrationCreatedResponse,
      },
      ...scanErrors,
      403: { description: `${authorErrors[403].description}; or providerId belongs to another organization` },
      409: { description: 'A concurrent request with the same Idempotency-Key has not finished; retry' },
      422: { description: 'providerId does not exist, or the Idempotency-Key was used with a different body' },
    },
    handler: async ({ req, res, auth }) => {
      catalog.requireAuthor(auth);
      const headers = parseOrThrow(idempotencyHeaders, { 'idempotency-key': req.get('idempotency-key') }, 'header');
      const { integration } = parseBody(integrationBody, req.body);
      const key = headers['idempotency-key'];
      const outcome = await catalog.createIntegration(auth, {
        draft: integrationDraft(integration),
        idempotency: key === undefined ? undefined : { key, body: req.body },
      });
      if (outcome.replayed) res.set('Idempotency-Replayed', 'true');
      res.status(201).json(toCreated(outcome.result));
    },
  });

  api.route({
    ...common,
    tags: ['Integrations'],
    method: 'post',
    path: '/api/v1/integration/v/:integrationVersionId/credential',
    summary: 'Add a credential template to an integration',
    description:
      "On the integration's versionId (not its id). An integration holds at most one credential per authType.",
    params: idParam('integrationVersionId', 'The integration versionId'),
    body: credentialBody,
    responses: {
      201: { description: 'Created; inputs echoed with defaults filled in', schema: credentialResponse },
      400: { description: 'Invalid body' },
      403: { description: `${authorErrors[403].description}; or the integration belongs to another organization` },
      404: { description: 'No such integration version (an integration id is not a version id)' },
      409: { description: 'The integration already has a credential with this authType' },
    },
    handler: async ({ req, res, auth }) => {
      catalog.requireAuthor(auth);
      const integration = await catalog.ownIntegrationVersion(
        auth,
        // Where a version id is written to, a malformed one names no version: 404 like an unknown one.
        String(req.params.integrationVersionId),
      );
      const { credential } = parseBody(credentialBody, req.body);
      const created = await catalog.addCredential(auth, integration, credentialContent(credential));
      res.status(201).json(toCredential(created));
    },
  });

  api.route({
    ...common,
    tags: ['Integrations'],
    method: 'post',
    path: '/api/v1/integration/v/:integrationVersionId/action',
    summary: 'Add an action to an integration',
    description:
      'On any versionId of the integration. Its code is scanned first; an integration holds at most 50 actions.',
    params: idParam('integrationVersionId', 'The integration versionId'),
    body: actionBody,
    responses: {
      201: { description: "Created: the action's first version", schema: actionResponse },
      400: {
        description:
          'Invalid body, the integration already holds 50 actions, or code security-scan violations (metadata.violations)',
      },
      403: { description: `${authorErrors[403].description}; or the integration belongs to another organization` },
      404: { description: 'No such integration version' },
      503: scanErrors[503],
    },
    handler: async ({ req, res, auth }) => {
      catalog.requireAuthor(auth);
      const integration = await catalog.ownIntegrationVersion(
        auth,
        // Where a version id is written to, a malformed one names no version: 404 like an unknown one.
        String(req.params.integrationVersionId),
      );
      const { action } = parseBody(actionBody, req.body);
      const created = await catalog.addAction(auth, integration, actionContent(action));
      res.status(201).json(toAction(created));
    },
  });

  api.route({
    ...common,
    tags: ['Integrations'],
    method: 'get',
    path: '/api/v1/integration',
    summary: 'List the integrations visible to the key',
    description:
      "The latest version of each integration of the key's organization and of each published by the service, newest first, a page at a time.",
    query: integrationListQuery,
    responses: {
      200: { description: 'Visible integrations', schema: integrationListResponse },
      400: { description: 'Malformed limit or offset' },
      ...readerErrors,
    },
    handler: async ({ res, auth, query }) => {
      catalog.requireReader(auth);
      res.json({
        integrations: (await catalog.listIntegrations(auth, query)).map(toIntegration),
        limit: query.limit,
        offset: query.offset,
      });
    },
  });

  const readErrors = {
    400: { description: 'Malformed id' },
    ...readerErrors,
    404: { description: "Unknown, or another organization's" },
  };

  api.route({
    ...common,
    tags: ['Integrations'],
    method: 'get',
    path: '/api/v1/integration/v/:integrationVersionId',
    summary: 'Read one integration version with the latest actions and credential templates',
    params: idParam('integrationVersionId', 'The integration versionId'),
    responses: { 200: { description: 'The version', schema: integrationDetailResponse }, ...readErrors },
    handler: async ({ req, res, auth }) => {
      catalog.requireReader(auth);
      res.json(
        toDetail(
          await catalog.integrationVersion(auth, parseId(req.params.integrationVersionId, 'integrationVersionId')),
        ),
      );
    },
  });

  api.route({
    ...common,
    tags: ['Integrations'],
    method: 'get',
    path: '/api/v1/integration/action/v/:actionVersionId',
    summary: 'Read one action version',
    params: idParam('actionVersionId', 'The action versionId'),
    responses: { 200: { description: 'The version', schema: actionResponse }, ...readErrors },
    handler: async ({ req, res, auth }) => {
      catalog.requireReader(auth);
      res.json(toAction(await catalog.actionVersion(auth, parseId(req.params.actionVersionId, 'actionVersionId'))));
    },
  });

  api.route({
    ...common,
    tags: ['Integrations'],
    method: 'get',
    path: '/api/v1/integration/credential/v/:credentialVersionId',
    summary: 'Read one credential template version',
    params: idParam('credentialVersionId', 'The credential versionId'),
    responses: { 200: { description: 'The version', schema: credentialResponse }, ...readErrors },
    handler: async ({ req, res, auth }) => {
      catalog.requireReader(auth);
      res.json(
        toCredential(
          await catalog.credentialVersion(auth, parseId(req.params.credentialVersionId, 'credentialVersionId')),
        ),
      );
    },
  });

  const updateErrors = {
    ...authorErrors,
    403: {
      description: `${authorErrors[403].description}; or the entry belongs to another organization or to the service`,
    },
    404: { description: 'Unknown id' },
    409: { description: 'Concurrent updates kept moving the latest version; retry' },
  };

  api.route({
    ...common,
    tags: ['Integrations'],
    method: 'patch',
    path: '/api/v1/integration/action/:actionId',
    summary: 'Update an action (cuts a new action version)',
    description:
      'Any subset of the fields; the rest carry over. Earlier action versions stay readable and runnable by their versionId. The resulting code is scanned again.',
    params: idParam('actionId', 'The action id'),
    body: actionUpdateBody,
    responses: { 200: { description: 'The new version', schema: actionResponse }, ...scanErrors, ...updateErrors },
    handler: async ({ req, res, auth }) => {
      catalog.requireAuthor(auth);
      const actionId = parseId(req.params.actionId, 'actionId');
      const { action } = parseBody(actionUpdateBody, req.body);
      res.json(toAction(await catalog.updateAction(auth, actionId, withoutUndefined(action))));
    },
  });

  api.route({
    ...common,
    tags: ['Integrations'],
    method: 'patch',
    path: '/api/v1/integration/credential/:credentialId',
    summary: 'Update a credential template (cuts a new credential version)',
    description:
      'Any subset of the fields except authType; the rest carry over. Earlier versions stay readable by their versionId.',
    params: idParam('credentialId', 'The credential id'),
    body: credentialUpdateBody,
    responses: {
      200: { description: 'The new version', schema: credentialResponse },
      400: { description: 'Invalid body' },
      ...updateErrors,
    },
    handler: async ({ req, res, auth }) => {
      catalog.requireAuthor(auth);
      const credentialId = parseId(req.params.credentialId, 'credentialId');
      const { credential } = parseBody(credentialUpdateBody, req.body);
      const { authType: _fixed, ...patch } = credential;
      res.json(toCredential(await catalog.updateCredential(auth, credentialId, withoutUndefined(patch))));
    },
  });

  api.route({
    ...common,
    tags: ['Integrations'],
    method: 'get',
    path: '/api/v1/integration/:integrationId',
    summary: 'Read an integration: its latest version with the latest actions and credential templates',
    params: idParam('integrationId', 'The integration id'),
    responses: { 200: { description: 'The integration', schema: integrationDetailResponse }, ...readErrors },
    handler: async ({ req, res, auth }) => {
      catalog.requireReader(auth);
      res.json(toDetail(await catalog.integration(auth, parseId(req.params.integrationId, 'integrationId'))));
    },
  });

  api.route({
    ...common,
    tags: ['Integrations'],
    method: 'patch',
    path: '/api/v1/integration/:integrationId',
    summary: 'Update an integration (cuts a new integration version)',
    description:
      'Any subset of its own fields; actions and credentials are updated on their own paths. Earlier integration versions stay readable and connectable.',
    params: idParam('integrationId', 'The integration id'),
    body: integrationUpdateBody,
    responses: {
      200: { description: 'The new version', schema: integrationResponse },
      400: { description: 'Invalid body' },
      ...updateErrors,
    },
    handler: async ({ req, res, auth }) => {
      catalog.requireAuthor(auth);
      const integrationId = parseId(req.params.integrationId, 'integrationId');
      const { integration } = parseBody(integrationUpdateBody, req.body);
      res.json(toIntegration(await catalog.updateIntegration(auth, integrationId, withoutUndefined(integration))));
    },
  });
}

/** A patch keeps only what was sent, so absent fields carry over instead of overwriting with undefined. */
function withoutUndefined<T extends object>(patch: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}
