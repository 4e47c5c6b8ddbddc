import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CredentialVault } from '../../src/connections/credential-vault.js';
import { secretBoxFromConfig } from '../../src/crypto/secret-box.js';
import { ConnectionRepo } from '../../src/store/connection-repo.js';
import { startTestService, type TestService } from '../support/harness.js';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres.js';
import { FakeOAuthProvider } from './fake-oauth-provider.js';
import { checkToken, consentByHttp } from './oauth-support.js';
import { authorIntegration, connect, connection, localServer, type LocalServer } from './support.js';

describe('connections on Postgres', () => {
  let schema: PostgresSchema;
  let svc: TestService;
  let server: LocalServer;
  const provider = new FakeOAuthProvider();
  beforeAll(async () => {
    schema = await createPostgresSchema();
    svc = await startTestService({ databaseUrl: schema.url });
    server = await localServer((_req, res) => res.writeHead(500).end('down'));
    await provider.start();
  });
  afterAll(async () => {
    await provider.stop();
    await server?.close();
    await svc?.stop();
    await schema?.drop();
  });

  it('connects, records a failed smoke test, lists, reuses, revokes and re-encrypts', async () => {
    const integration = await authorIntegration(svc, svc.key, { endpoint: `${server.url}/x` });
    const made = await connect(
      svc,
      connection(integration, svc.workspaceId, { testActionVersionId: integration.actionVersionId }),
    );
    expect(made.status, made.text).toBe(201);
    expect(made.body).toMatchObject({ testPassed: false, testError: 'HTTP 500: down' });
    const id = String(made.body.activeIntegrationId);
    const reused = await connect(
      svc,
      connection(integration, svc.workspaceId, {
        credentialVersionId: undefined,
        credentialData: undefined,
        activeCredentialId: made.body.activeCredentialId,
      }),
    );
    expect(reused.status, reused.text).toBe(201);
    const list = await svc.request('GET', `/api/v1/workspace/${svc.workspaceId}/connections?limit=1`);
    expect((list.body.connections as Array<{ id: string }>).map((c) => c.id)).toEqual([
      reused.body.activeIntegrationId,
    ]);
    expect((await svc.request('GET', `/api/v1/connection/${id}`)).body).toMatchObject({
      testPassed: false,
      testError: 'HTTP 500: down',
    });
    expect((await svc.request('POST', `/api/v1/connection/${id}/revoke`)).body).toMatchObject({ status: 'revoked' });

    const repo = new ConnectionRepo(svc.service.context.store.db);
    const stored = await repo.findCredential(String(made.body.activeCredentialId));
    const vault = new CredentialVault(secretBoxFromConfig(svc.config));
    expect(stored && vault.open(stored)).toEqual({ api_key: 'sk-live-0123456789abcdef' });
    // Everything is under the current key already: nothing to re-encrypt, and a stale compare-and-set changes nothing.
    expect(await vault.reencryptAll(repo)).toBe(0);
    expect(await repo.replaceCiphertext(String(made.body.activeCredentialId), 'v1:old:stale', 'v1:new:x')).toBe(false);
  });

  it('OAuth: authorizes, the state is used once, tokens are written by generation, re-authorizes', async () => {
    const integration = await authorIntegration(svc, svc.key, { authType: 'oauth', inputs: provider.templateInputs() });
    const made = await connect(
      svc,
      connection(integration, svc.workspaceId, {
        credentialData: { client_id: provider.clientId, client_secret: provider.clientSecret },
      }),
    );
    expect(made.status, made.text).toBe(201);
    const page = await consentByHttp(String(made.body.authorizationUrl), 'allow');
    expect(page.outcome, page.html).toBe('connected');
    expect((await fetch(page.callbackUrl)).status).toBe(400);
    const check = await checkToken(svc, String(made.body.connectionToken));
    expect(check.body).toMatchObject({ status: 'succeeded', workspaceId: svc.workspaceId });
    const id = String(check.body.activeIntegrationId);
    expect((await svc.request('GET', `/api/v1/connection/${id}`)).body.status).toBe('connected');

    const repo = new ConnectionRepo(svc.service.context.store.db);
    const credentialId = String(made.body.activeCredentialId);
    const stored = await repo.findCredential(credentialId);
    expect(stored?.tokenGeneration).toBe(1);
    // A writer holding a stale generation changes nothing.
    expect(await repo.writeTokens(credentialId, 0, 'v1:stale:x')).toBe(false);

    const again = await svc.request('POST', `/api/v1/connection/${id}/reauthorize`);
    expect(again.status, again.text).toBe(201);
    expect((await consentByHttp(String(again.body.authorizationUrl), 'allow')).outcome).toBe('connected');
    expect((await repo.findCredential(credentialId))?.tokenGeneration).toBe(2);
  });
});
