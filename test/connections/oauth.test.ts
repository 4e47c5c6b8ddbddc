import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { field } from '../catalog/support.js';
import { createWorkflow, results, startCase, waitForEnd } from '../cases/support.js';
import { Graph, vars } from '../support/graphs.js';
import { clientFor, newCaller, newKey, newWorkspace } from '../support/keys.js';
import { oauthRefreshWorkflowId } from '../../src/temporal/contracts/oauth.js';
import { withTokens } from '../../src/connections/oauth-credential.js';
import { createLogger } from '../../src/logging/logger.js';
import { ownUrlHost } from '../support/host-address.js';
import { answered, refused, startTestService, type TestService } from '../support/harness.js';
import { FakeOAuthProvider } from './fake-oauth-provider.js';
import {
  checkToken,
  consentByHttp,
  consentInBrowser,
  eventually,
  launchChromium,
  noConnection,
} from './oauth-support.js';
import { authorIntegration, connect, connection, expectError, expectRefused, type Integration } from './support.js';
import { oauthRefreshStatusQuery } from '../../src/temporal/contracts/oauth.js';

const actionCode = [
  'import json',
  'import urllib.request',
  "request = urllib.request.Request(input_data['url'], headers={'Authorization': 'Bearer ' + credential_value['access_token']})",
  'with urllib.request.urlopen(request, timeout=5) as answer:',
  '    data = json.loads(answer.read().decode())',
  "result['name'] = data['name']",
  "result['fields'] = ','.join(sorted(credential_value.keys()))",
  '',
].join('\n');

const logLines: string[] = [];
const provider = new FakeOAuthProvider();
let svc: TestService;
let browser: Browser;
let integration: Integration;

beforeAll(async () => {
  await provider.start();
  [svc, browser] = await Promise.all([
    startTestService({
      logger: createLogger('debug', {}, 'json', { write: (line: string) => void logLines.push(line) }),
      // Transient refresh failures are retried after 1 s, 2 s, … here (10 s by default).
      config: { connections: { oauth: { retryInitialMs: 1000, retryMaxMs: 4000 } } },
    }),
    launchChromium(),
  ]);
  integration = await authorIntegration(svc, svc.key, {
    authType: 'oauth',
    inputs: provider.templateInputs(),
    endpoint: `${provider.url}/api/me`,
    code: actionCode,
    outputs: { name: field('name'), fields: field('fields') },
  });
}, 240_000);
afterAll(async () => {
  await browser?.close();
  await svc?.stop();
  await provider.stop();
});

const clientPair = () => ({ client_id: provider.clientId, client_secret: provider.clientSecret });

/** A connect answering pending_authorization, its URL and token present. */
async function startConnect() {
  const res = await answered(
    connect(
      svc,
      connection(integration, svc.workspaceId, {
        credentialData: clientPair(),
        testActionVersionId: integration.actionVersionId,
      }),
    ),
    201,
  );
  return { ...res, authorizationUrl: String(res.authorizationUrl), connectionToken: String(res.connectionToken) };
}

const byId = (connectionId: string) => ({ params: { path: { connectionId } } });
const connectionStatus = async (connectionId: string) =>
  (await answered(svc.client.GET('/api/v1/connection/{connectionId}', byId(connectionId)), 200)).status;

/** What a person does: connect, consent in the browser; the connection's ids. */
async function authorizedConnection(): Promise<{ connectionId: string; credentialId: string }> {
  const started = await startConnect();
  const page = await consentInBrowser(browser, started.authorizationUrl, 'allow');
  expect(page.outcome, page.text).toBe('connected');
  const check = await checkToken(svc, started.connectionToken);
  expect(check.status).toBe('succeeded');
  return { connectionId: String(check.activeIntegrationId), credentialId: started.activeCredentialId };
}

const refreshStatus = (credentialId: string) =>
  svc.service.context.temporal.client.workflow
    .getHandle(oauthRefreshWorkflowId(credentialId))
    .query(oauthRefreshStatusQuery);

/**
 * The access token as if its hour had passed: the stored tokens get an expiry
 * in the past (a new generation, as a re-authorization would write) and the
 * refresh workflow is told, so it refreshes at once.
 */
async function expireAccessToken(credentialId: string): Promise<void> {
  const { services } = svc.service.context;
  const meta = await services.oauthTokens.store(credentialId, {
    access_token: 'expired-access-token',
    token_type: 'Bearer',
    expires_at: new Date(Date.now() - 1000).toISOString(),
    obtained_at: new Date(Date.now() - 3_601_000).toISOString(),
  });
  await svc.service.context.temporal.client.workflow
    .getHandle(oauthRefreshWorkflowId(credentialId))
    .signal('oauthTokensReplaced', meta);
}

function actionGraph(connectionId: string): Graph {
  const g = new Graph();
  const inputs = [{ name: 'url' }];
  const input = g.input(inputs);
  const node = g.node({
    name: 'Who am I',
    type: 'action',
    handler_class: 'integration_action',
    process: { connection_id: connectionId, action_version_id: integration.actionVersionId },
    input_schema: vars(inputs),
    output_schema: vars([{ name: 'name' }, { name: 'fields' }]),
  });
  const output = g.output([{ name: 'name' }, { name: 'fields' }]);
  g.edge(input, node);
  g.edge(node, output);
  return g;
}

describe('connect with an oauth credential', () => {
  it('answers pending_authorization with a PKCE authorization URL and a connection token; 422 without the endpoints', async () => {
    const started = await startConnect();
    expect(started.status).toBe('pending_authorization');
    expect(started.activeIntegrationId).toBeNull();
    const url = new URL(started.authorizationUrl);
    expect(`${url.origin}${url.pathname}`).toBe(`${provider.url}/authorize`);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: provider.clientId,
      redirect_uri: `${svc.url}/api/v1/oauth/callback`,
      scope: 'read write',
      code_challenge_method: 'S256',
    });
    // 32 random bytes, base64url.
    expect(url.searchParams.get('state')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(started.connectionToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const check = await checkToken(svc, started.connectionToken);
    expect(check).toEqual({ status: 'pending', ...noConnection });

    // Only hashes of the token and state are stored.
    const row = await svc.service.context.store.db
      .selectFrom('oauth_attempts')
      .selectAll()
      .orderBy('created_at', 'desc')
      .executeTakeFirstOrThrow();
    const stored = JSON.stringify(row);
    expect(stored).not.toContain(started.connectionToken);
    expect(stored).not.toContain(url.searchParams.get('state'));

    const noEndpoints = await authorIntegration(svc, svc.key, {
      authType: 'oauth',
      inputs: {
        client_id: provider.templateInputs().client_id,
        client_secret: provider.templateInputs().client_secret,
      },
    });
    const error = JSON.stringify(
      await refused(connect(svc, connection(noEndpoints, svc.workspaceId, { credentialData: clientPair() })), 422),
    );
    expect(error).toContain('authorization_url');
    expect(error).toContain('token_url');
  });

  it('a person consents in a real browser: the check says succeeded with the ids, the smoke test ran with the token', async () => {
    const started = await startConnect();
    const page = await consentInBrowser(browser, started.authorizationUrl, 'allow');
    expect(page.outcome, page.text).toBe('connected');
    const check = await checkToken(svc, started.connectionToken);
    expect(check).toMatchObject({
      status: 'succeeded',
      activeIntegrationVersionId: integration.versionId,
      activeCredentialId: started.activeCredentialId,
      workspaceId: svc.workspaceId,
      testPassed: true,
      testError: null,
    });
    const connectionId = String(check.activeIntegrationId);
    expect(await connectionStatus(connectionId)).toBe('connected');

    // The exchange: client authenticated (basic), the PKCE verifier sent, the redirect URI repeated.
    const exchange = provider.tokenRequests.filter((r) => r.grantType === 'authorization_code').at(-1);
    expect(exchange?.auth).toBe('basic');
    expect(exchange?.params.code_verifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(exchange?.params.redirect_uri).toBe(`${svc.url}/api/v1/oauth/callback`);

    // The tokens are encrypted at rest; nothing secret in the logs.
    const accessToken = [...provider.validAccessTokens][0] ?? '';
    const refreshToken = provider.currentRefreshToken ?? '';
    for (const file of readdirSync(svc.dataDir).filter((f) => f.startsWith('caseflow.db'))) {
      const bytes = readFileSync(path.join(svc.dataDir, file));
      for (const secret of [accessToken, refreshToken, provider.clientSecret, started.connectionToken])
        expect(bytes.includes(secret), file).toBe(false);
    }
    const logs = logLines.join('\n');
    for (const secret of [accessToken, refreshToken, provider.clientSecret, started.connectionToken])
      expect(logs).not.toContain(secret);
    expect(logs).toContain('oauth.authorization_succeeded');

    // The refresh workflow runs for the credential, visible in Temporal.
    const status = await refreshStatus(started.activeCredentialId);
    expect(status).toMatchObject({ generation: 1, needsReauthorization: false, waiting: 0 });

    // The same redirect again (a replayed state) changes nothing.
    const exchanges = provider.tokenRequests.length;
    const replay = await fetch(page.url);
    expect(replay.status).toBe(400);
    expect(await replay.text()).toContain('data-outcome="invalid"');
    expect(provider.tokenRequests.length).toBe(exchanges);
    expect((await checkToken(svc, started.connectionToken)).status).toBe('succeeded');
  });

  it('a person denies consent in the browser: failed, nothing connected', async () => {
    const started = await startConnect();
    const exchanges = provider.tokenRequests.length;
    const page = await consentInBrowser(browser, started.authorizationUrl, 'deny');
    expect(page.outcome, page.text).toBe('denied');
    expect(await checkToken(svc, started.connectionToken)).toEqual({ status: 'failed', ...noConnection });
    expect(provider.tokenRequests.length).toBe(exchanges);
    const list = await answered(
      svc.client.GET('/api/v1/workspace/{workspaceId}/connections', {
        params: { path: { workspaceId: svc.workspaceId }, query: { limit: 200 } },
      }),
      200,
    );
    const row = list.connections.find((c) => c.activeCredentialId === started.activeCredentialId);
    expect(row?.status).toBe('pending_authorization');
  });
});

describe('as an attacker', () => {
  it('another organization, a workspace the key cannot read, an unknown token: expired; no Integration: Read: 403', async () => {
    const started = await startConnect();
    const other = await newCaller(svc, ['integration:full']);
    expect(await checkToken(svc, started.connectionToken, other.key)).toEqual({
      status: 'expired',
      ...noConnection,
    });
    const elsewhere = await newWorkspace(svc);
    const scoped = (await newKey(svc, ['integration:read'], { userId: svc.userId, workspaceIds: [elsewhere] })).key;
    const fromElsewhere = await checkToken(svc, started.connectionToken, scoped);
    expect(fromElsewhere).toEqual({ status: 'expired', ...noConnection });
    expect(await checkToken(svc, 'never-issued-token')).toEqual({ status: 'expired', ...noConnection });
    const noRead = await newCaller(svc, ['code:full']);
    await expectRefused(
      clientFor(svc, noRead.key).GET('/api/v1/integration/connect/{connectionToken}', {
        params: { path: { connectionToken: started.connectionToken } },
      }),
      403,
    );
    expectError(await svc.request('GET', `/api/v1/integration/connect/${started.connectionToken}`, { key: null }), 401);

    // The attempt is untouched: the rightful caller still sees it pending.
    expect((await checkToken(svc, started.connectionToken)).status).toBe('pending');
  });

  it('an unknown or forged state changes nothing', async () => {
    const started = await startConnect();
    const before = provider.tokenRequests.length;
    for (const query of ['state=forged&code=abc', 'code=abc', 'state=&error=access_denied']) {
      const res = await fetch(`${svc.url}/api/v1/oauth/callback?${query}`);
      expect(res.status).toBe(400);
      expect(await res.text()).toContain('data-outcome="invalid"');
    }
    expect(provider.tokenRequests.length).toBe(before);
    expect((await checkToken(svc, started.connectionToken)).status).toBe('pending');
  });

  it.each([
    ['a metadata address', 'http://169.254.169.254/latest/meta-data/token', 'link-local'],
    // Refused at the policy's decision: nothing is sent to the machine's non-loopback address.
    ["this machine's own (eth0) address", `http://${ownUrlHost()}:8080/token`, 'is an address of this host'],
  ])('a token URL at %s is refused by the outbound policy: failed, never called', async (_name, tokenUrl, why) => {
    const inputs = provider.templateInputs();
    const internal = await authorIntegration(svc, svc.key, {
      authType: 'oauth',
      inputs: {
        ...inputs,
        token_url: { ...inputs.token_url, default: tokenUrl },
      },
    });
    const res = await answered(
      connect(svc, connection(internal, svc.workspaceId, { credentialData: clientPair() })),
      201,
    );
    const page = await consentByHttp(String(res.authorizationUrl), 'allow');
    expect(page.outcome, page.html).toBe('failed');
    expect(page.html).toContain('outbound policy');
    expect(page.html).toContain(why);
    expect(await checkToken(svc, String(res.connectionToken))).toEqual({
      status: 'failed',
      ...noConnection,
    });
  });
});

describe('tokens that never silently die', () => {
  it('actions use the access token; concurrent actions during a refresh make exactly one token request', async () => {
    const { connectionId, credentialId } = await authorizedConnection();
    const wf = await createWorkflow(svc, actionGraph(connectionId), 'oauth action');
    const first = await startCase(svc, wf.workflowId, { url: `${provider.url}/api/me` });
    expect((await waitForEnd(svc, first)).status).toBe('COMPLETED');
    const out = await results(svc, first);
    expect(out.name?.value).toBe('Ada');
    // The action code gets the access token, not the client secret or the refresh token.
    expect(String(out.fields?.value).split(',')).toContain('access_token');
    expect(String(out.fields?.value)).not.toMatch(/client_secret|refresh_token/);

    provider.holdRefreshes();
    const before = provider.refreshCount;
    await expireAccessToken(credentialId);
    await eventually(
      async () => provider.refreshCount,
      (n) => n === before + 1,
      'the refresh request',
    );
    const cases = await Promise.all(
      [1, 2, 3].map(() => startCase(svc, wf.workflowId, { url: `${provider.url}/api/me` })),
    );
    // All three actions found the token expired and wait for the one refresh in flight.
    await eventually(
      () => refreshStatus(credentialId),
      (s) => s.waiting === 3,
      'three waiting actions',
    );
    provider.release();
    for (const caseId of cases) {
      const status = await waitForEnd(svc, caseId);
      expect(status.status, JSON.stringify(status)).toBe('COMPLETED');
      expect((await results(svc, caseId)).name?.value).toBe('Ada');
    }
    expect(provider.refreshCount).toBe(before + 1);

    // The rotated refresh token was saved: the provider accepts only the latest one.
    await expireAccessToken(credentialId);
    const again = await startCase(svc, wf.workflowId, { url: `${provider.url}/api/me` });
    expect((await waitForEnd(svc, again)).status).toBe('COMPLETED');
    expect(provider.refreshCount).toBe(before + 2);
    const refreshed = provider.tokenRequests.filter((r) => r.grantType === 'refresh_token');
    expect(new Set(refreshed.map((r) => r.params.refresh_token)).size).toBe(refreshed.length);
  });

  it('5xx from the token endpoint is retried with backoff; the connection stays connected', async () => {
    const { connectionId, credentialId } = await authorizedConnection();
    provider.refreshMode = 'error500';
    const before = provider.refreshCount;
    await expireAccessToken(credentialId);
    const failing = await eventually(
      () => refreshStatus(credentialId),
      (s) => s.failures >= 2,
      'two failed refresh rounds',
    );
    expect(failing.lastError).toContain('HTTP 500');
    expect(failing.needsReauthorization).toBe(false);
    expect(await connectionStatus(connectionId)).toBe('connected');
    provider.refreshMode = 'ok';
    const healed = await eventually(
      () => refreshStatus(credentialId),
      (s) => s.failures === 0,
      'a successful refresh after the outage',
    );
    expect(healed.needsReauthorization).toBe(false);
    expect(provider.refreshCount).toBeGreaterThanOrEqual(before + 3);
    expect(logLines.join('\n')).toContain('oauth.refresh_failed');
  });

  it('invalid_grant: needs re-authorization, nodes fail saying so; re-authorizing the same connection brings it back', async () => {
    const { connectionId, credentialId } = await authorizedConnection();
    const wf = await createWorkflow(svc, actionGraph(connectionId), 'oauth reauth');
    provider.refreshMode = 'invalid_grant';
    await expireAccessToken(credentialId);
    await eventually(
      () => connectionStatus(connectionId),
      (s) => s === 'needs_reauthorization',
      'needs_reauthorization',
    );
    const failed = await startCase(svc, wf.workflowId, { url: `${provider.url}/api/me` });
    const status = await waitForEnd(svc, failed);
    expect(status.status).toBe('FAILED');
    expect(JSON.stringify(status)).toContain(`/api/v1/connection/${connectionId}/reauthorize`);
    expect(logLines.join('\n')).toContain('oauth.needs_reauthorization');
    const metrics = await fetch(`${svc.url}/metrics`).then((r) => r.text());
    expect(metrics).toMatch(/caseflow_oauth_events_total\{event="needs_reauthorization"\} [1-9]/);

    provider.refreshMode = 'ok';
    const again = await answered(
      svc.client.POST('/api/v1/connection/{connectionId}/reauthorize', byId(connectionId)),
      201,
    );
    expect(again).toMatchObject({
      status: 'pending_authorization',
      activeIntegrationId: connectionId,
      activeCredentialId: credentialId,
    });
    const page = await consentInBrowser(browser, String(again.authorizationUrl), 'allow');
    expect(page.outcome).toBe('connected');
    const check = await checkToken(svc, String(again.connectionToken));
    expect(check).toMatchObject({ status: 'succeeded', activeIntegrationId: connectionId });
    expect(await connectionStatus(connectionId)).toBe('connected');
    const ok = await startCase(svc, wf.workflowId, { url: `${provider.url}/api/me` });
    expect((await waitForEnd(svc, ok)).status).toBe('COMPLETED');
    expect(await refreshStatus(credentialId)).toMatchObject({ needsReauthorization: false });

    // Another organization cannot re-authorize it.
    const other = await newCaller(svc, ['integration:full']);
    await expectRefused(
      clientFor(svc, other.key).POST('/api/v1/connection/{connectionId}/reauthorize', byId(connectionId)),
      403,
    );
  });
});

describe('the redirect page and logs', () => {
  it('the connection token never reaches a log line', async () => {
    const started = await startConnect();
    await checkToken(svc, started.connectionToken);
    expect(logLines.join('\n')).toContain('/api/v1/integration/connect/[redacted]');
    expect(logLines.join('\n')).not.toContain(started.connectionToken);
  });

  it('withTokens keeps the held refresh token when a refresh answer has none', () => {
    const kept = withTokens(
      { client_id: 'c', refresh_token: 'rt-old' },
      { access_token: 'at-new', token_type: 'Bearer', obtained_at: new Date(0).toISOString() },
    );
    expect(kept).toMatchObject({ access_token: 'at-new', refresh_token: 'rt-old' });
    const rotated = withTokens(
      { refresh_token: 'rt-old' },
      { access_token: 'at', refresh_token: 'rt-new', token_type: 'Bearer', obtained_at: new Date(0).toISOString() },
    );
    expect(rotated.refresh_token).toBe('rt-new');
  });
});
