import type { z } from 'zod';
import type { ConnectionCheck } from '../connections/oauth-flow.js';
import { oauthCallbackPath } from '../connections/oauth-flow.js';
import type { AppContext } from '../context.js';
import type { ApiRoutes } from './route.js';
import { connectionCheckResponse, connectionTokenParams, oauthCallbackQuery } from './schemas/connection.js';
import { oauthResultPage } from './views/oauth-page.js';

function toCheck({ status, connection }: ConnectionCheck): z.infer<typeof connectionCheckResponse> {
  return {
    status,
    activeIntegrationId: connection?.id ?? null,
    activeIntegrationVersionId: connection?.integrationVersionId ?? null,
    activeCredentialId: connection?.credentialId ?? null,
    workspaceId: connection?.workspaceId ?? null,
    testPassed: connection?.testPassed ?? null,
    testError: connection?.testError ?? null,
  };
}

/** The OAuth flow's two HTTP ends: the caller's check, and the provider's redirect of the person's browser. */
export function registerOAuthRoutes(api: ApiRoutes, ctx: AppContext): void {
  const { oauth } = ctx.services;

  api.route({
    auth: true,
    tags: ['Connections'],
    method: 'get',
    path: '/api/v1/integration/connect/:connectionToken',
    summary: 'Check an OAuth connection',
    description:
      'The outcome of the authorization started by Connect: pending, succeeded (ids returned), failed (consent denied, ' +
      'provider error, token exchange rejected) or expired (10 minutes without a callback). Every field is always ' +
      'present, null until a connection exists. Unknown tokens, other callers’ tokens and tokens of workspaces the key ' +
      'cannot read are expired: there is no 404. Requires Integration: Read in at least one workspace.',
    params: connectionTokenParams,
    neverAnswers: [404],
    responses: {
      200: { description: 'The outcome', schema: connectionCheckResponse },
      403: { description: 'Integration: Read missing in every workspace' },
    },
    handler: async ({ res, auth, params }) => {
      res.setHeader('cache-control', 'no-store');
      res.json(toCheck(await oauth.check(auth, params.connectionToken)));
    },
  });

  api.route({
    auth: false,
    tags: ['Connections'],
    method: 'get',
    path: oauthCallbackPath,
    summary: 'OAuth redirect URI (the provider sends the person here)',
    description:
      'No API key: the state (single use, bound to one attempt) authenticates the redirect. Exchanges the code for ' +
      'tokens with the PKCE verifier, stores them encrypted, and shows the person a small HTML page (connected, denied, ' +
      'failed, expired). A replayed or unknown state changes nothing.',
    query: oauthCallbackQuery,
    responses: {
      200: { description: 'HTML: connected, denied or failed', html: true },
      400: { description: 'HTML: unknown or already used state; JSON: an invalid query', html: true },
      410: { description: 'HTML: the 10 minutes to authorize had passed', html: true },
    },
    handler: async ({ res, query }) => {
      const { status, html } = oauthResultPage(await oauth.callback(query));
      res.setHeader('cache-control', 'no-store');
      // The URL carried the code and state: nothing on the page may send it on (no referrer, no subresources).
      res.setHeader('referrer-policy', 'no-referrer');
      res.setHeader('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'");
      res.status(status).type('html').send(html);
    },
  });
}
