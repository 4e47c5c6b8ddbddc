import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CredentialVault } from '../../src/connections/credential-vault.js';
import { secretBoxFromConfig } from '../../src/crypto/secret-box.js';
import { ConnectionRepo } from '../../src/store/connection-repo.js';
import { answered, startTestService, type TestService } from '../support/harness.js';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres.js';
import { FakeOAuthProvider } from './fake-oauth-provider.js';
import { checkToken, connectOAuth, consentByHttp } from './oauth-support.js';
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
    const made = await answered(
      connect(svc, connection(integration, svc.workspaceId, { testActionVersionId: integration.actionVersionId })),
      201,
    );
    expect(made).toMatchObject({ testPassed: false, testError: 'HTTP 500: down' });
    const byId = { params: { path: { connectionId: String(made.activeIntegrationId) } } };
    const reused = await answered(
      connect(
        svc,
        connection(integration, svc.workspaceId, {
          credentialVersionId: undefined,
          credentialData: undefined,
          activeCredentialId: made.activeCredentialId,
        }),
      ),
      201,
    );
    const list = await answered(
      svc.client.GET('/api/v1/workspace/{workspaceId}/connections', {
        params: { path: { workspaceId: svc.workspaceId }, query: { limit: 1 } },
      }),
      200,
    );
    expect(list.connections.map((c) => c.id)).toEqual([reused.activeIntegrationId]);
    expect(await answered(svc.client.GET('/api/v1/connection/{connectionId}', byId), 200)).toMatchObject({
      testPassed: false,
      testError: 'HTTP 500: down',
    });
    expect(await answered(svc.client.POST('/api/v1/connection/{connectionId}/revoke', byId), 200)).toMatchObject({
      status: 'revoked',
    });

    const repo = new ConnectionRepo(svc.service.context.store.db);
    const stored = await repo.findCredential(made.activeCredentialId);
    const vault = new CredentialVault(secretBoxFromConfig(svc.config));
    expect(stored && vault.open(stored)).toEqual({ api_key: 'sk-live-0123456789abcdef' });
    // Everything is under the current key already: nothing to re-encrypt, and a stale compare-and-set changes nothing.
    expect(await vault.reencryptAll(repo)).toBe(0);
    expect(await repo.replaceCiphertext(made.activeCredentialId, 'v1:old:stale', 'v1:new:x')).toBe(false);
  });

  it('OAuth: authorizes, the state is used once, tokens are written by generation, re-authorizes', async () => {
    const integration = await authorIntegration(svc, svc.key, { authType: 'oauth', inputs: provider.templateInputs() });
    const made = await connectOAuth(svc, integration, provider);
    const page = await consentByHttp(String(made.authorizationUrl), 'allow');
    expect(page.outcome, page.html).toBe('connected');
    expect((await fetch(page.callbackUrl)).status).toBe(400);
    const check = await checkToken(svc, String(made.connectionToken));
    expect(check).toMatchObject({ status: 'succeeded', workspaceId: svc.workspaceId });
    const id = String(check.activeIntegrationId);
    const byId = { params: { path: { connectionId: id } } };
    expect((await answered(svc.client.GET('/api/v1/connection/{connectionId}', byId), 200)).status).toBe('connected');

    const repo = new ConnectionRepo(svc.service.context.store.db);
    const credentialId = made.activeCredentialId;
    const stored = await repo.findCredential(credentialId);
    expect(stored?.tokenGeneration).toBe(1);
    // A writer holding a stale generation changes nothing.
    expect(await repo.writeTokens(credentialId, 0, 'v1:stale:x')).toBe(false);

    const again = await answered(svc.client.POST('/api/v1/connection/{connectionId}/reauthorize', byId), 201);
    expect((await consentByHttp(String(again.authorizationUrl), 'allow')).outcome).toBe('connected');
    expect((await repo.findCredential(credentialId))?.tokenGeneration).toBe(2);
  });
});
