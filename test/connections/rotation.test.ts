import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseMasterKeys, SecretBox } from '../../src/crypto/secret-box.js';
import { SubscriptionRepo } from '../../src/store/subscription-repo.js';
import { SubscriptionSecrets } from '../../src/subscriptions/subscription-secrets.js';
import { createWorkflow } from '../cases/support.js';
import { Graph } from '../support/graphs.js';
import { deliver, sign } from '../hooks/support.js';
import { answered, startTestService, type TestService } from '../support/harness.js';
import { FakeOAuthProvider } from './fake-oauth-provider.js';
import { checkToken, connectOAuth, consentByHttp } from './oauth-support.js';
import { authorIntegration, connect, connection, localServer, type Integration, type LocalServer } from './support.js';
import { clientFor, newKey } from '../support/keys.js';

const run = promisify(execFile);
const secret = 'sk-rotate-me-0123456789';
let first: TestService | undefined;
let second: TestService | undefined;
let server: LocalServer;
const provider = new FakeOAuthProvider();

beforeAll(async () => {
  server = await localServer((_req, res) => res.writeHead(200).end('ok'));
  await provider.start();
});
afterAll(async () => {
  await second?.stop();
  await first?.stop();
  await server?.close();
  await provider.stop();
});

const keyIdOf = (ciphertext: string) => ciphertext.split(':')[1];

async function caseflow(dataDir: string, ...args: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await run(process.execPath, [path.resolve('dist/src/cli/main.js'), ...args], {
    env: { ...process.env, CASEFLOW_DATA_DIR: dataDir, LOG_LEVEL: 'silent', CASEFLOW_MASTER_KEY: '' },
  });
  return JSON.parse(stdout) as Record<string, unknown>;
}

describe('caseflow secrets rotate-master-key', () => {
  it('puts a new key in the key file, re-encrypts every credential and webhook secret, drops the old key; the service reads them with the new key', async () => {
    first = await startTestService();
    const svc = first;
    const integration: Integration = await authorIntegration(svc, svc.key, { endpoint: `${server.url}/ping` });
    const made = await answered(
      connect(svc, connection(integration, svc.workspaceId, { credentialData: { api_key: secret } })),
      201,
    );
    const webhook = await answered(
      svc.client.GET('/api/v1/workspace/{workspaceId}/webhook-secret', {
        params: { path: { workspaceId: svc.workspaceId } },
      }),
      200,
    );
    const g = new Graph();
    g.edge(g.input([{ name: 'title' }]), g.output([{ name: 'title' }]));
    const { workflowId } = await createWorkflow(svc, g, 'hooked');
    const hook = await answered(
      svc.client.POST('/api/v1/workflow/{workflowId}/hooks', {
        params: { path: { workflowId } },
        body: { name: 'rotated', scheme: 'github' },
      }),
      201,
    );
    const subscription = await answered(
      svc.client.POST('/api/v1/subscriptions', {
        body: { workspaceId: svc.workspaceId, url: `${server.url}/events`, eventTypes: ['case.failed'] },
      }),
      201,
    );
    const db = svc.service.context.store.db;
    const credentialId = made.activeCredentialId;
    const before = await db
      .selectFrom('connection_credentials')
      .select('data_ciphertext')
      .where('id', '=', credentialId)
      .executeTakeFirstOrThrow();
    const oldKeyId = keyIdOf(before.data_ciphertext);
    const { dataDir, organizationId, workspaceId, userId } = svc;
    await svc.stop({ keepData: true });
    first = undefined;

    const rotated = await caseflow(dataDir, 'secrets', 'rotate-master-key', '--drop-old');
    expect(rotated).toMatchObject({
      credentials: 1,
      webhookSecrets: 1,
      hookSecrets: 1,
      subscriptionSecrets: 1,
      droppedKeyIds: [oldKeyId],
    });
    const ring = readFileSync(path.join(dataDir, 'master.key'), 'utf8').trim();
    expect(ring.split('\n')).toHaveLength(1);
    expect(ring.startsWith(`${String(rotated.currentKeyId)}:`)).toBe(true);
    expect(rotated.currentKeyId).not.toBe(oldKeyId);
    // Nothing left to do: a second run changes nothing.
    expect(await caseflow(dataDir, 'secrets', 'reencrypt')).toMatchObject({
      credentials: 0,
      webhookSecrets: 0,
      hookSecrets: 0,
      subscriptionSecrets: 0,
    });

    // A process reads the ring at start; this one is handed the rotated ring (the file's content) explicitly.
    second = await startTestService({ dataDir, config: { secrets: { masterKey: ring } } });
    const after = await second.service.context.store.db
      .selectFrom('connection_credentials')
      .select('data_ciphertext')
      .where('id', '=', credentialId)
      .executeTakeFirstOrThrow();
    expect(keyIdOf(after.data_ciphertext)).toBe(rotated.currentKeyId);
    expect(after.data_ciphertext).not.toContain(secret);

    const apiKey = (
      await newKey(
        second,
        ['workflow:full', 'case:full', 'file:full', 'integration:full', 'code:full', 'discovery:full'],
        { organizationId, userId },
      )
    ).key;
    const reused = await answered(
      connect(
        second,
        connection(integration, workspaceId, {
          credentialVersionId: undefined,
          credentialData: undefined,
          activeCredentialId: credentialId,
          testActionVersionId: integration.actionVersionId,
        }),
        apiKey,
      ),
      201,
    );
    expect(reused.testPassed).toBe(true);
    expect(server.received.at(-1)?.headers['x-api-key']).toBe(secret);
    const webhookAfter = await answered(
      clientFor(second, apiKey).GET('/api/v1/workspace/{workspaceId}/webhook-secret', {
        params: { path: { workspaceId } },
      }),
      200,
    );
    expect(webhookAfter.secret).toBe(webhook.secret);
    // The hook's secret, resealed under the new key, still verifies its sender's deliveries.
    const delivery = JSON.stringify({ title: 'after rotation' });
    const delivered = await deliver(second, hook.hookId, delivery, sign.github(hook.secret, delivery));
    expect(delivered.status, delivered.text).toBe(202);
    // The subscription's signing secret, resealed under the new key, still opens (the old key is gone).
    const subscriptionId = subscription.id;
    const sealed = await second.service.context.store.db
      .selectFrom('event_subscriptions')
      .select('secret_ciphertext')
      .where('id', '=', subscriptionId)
      .executeTakeFirstOrThrow();
    expect(keyIdOf(sealed.secret_ciphertext)).toBe(rotated.currentKeyId);
    const box = new SecretBox(parseMasterKeys(ring, 'the rotated key file'));
    const secrets = new SubscriptionSecrets(new SubscriptionRepo(second.service.context.store.db), box, 0);
    expect(await secrets.signingSecrets(subscriptionId, new Date())).toEqual([subscription.secret]);
  });
});

describe('caseflow secrets rotate-master-key with an OAuth authorization in flight', () => {
  it("re-encrypts the attempt's PKCE verifier: the person consents after the rotation and the connection succeeds", async () => {
    first = await startTestService();
    const svc = first;
    const integration = await authorIntegration(svc, svc.key, {
      authType: 'oauth',
      inputs: provider.templateInputs(),
      endpoint: `${provider.url}/api/me`,
    });
    const started = await connectOAuth(svc, integration, provider);
    const attempts = () =>
      svc.service.context.store.db.selectFrom('oauth_attempts').select(['id', 'verifier_ciphertext']).execute();
    const [attempt] = await attempts();
    const oldKeyId = keyIdOf(attempt?.verifier_ciphertext ?? '');
    const { dataDir, taskQueue, organizationId, userId } = svc;
    await svc.stop({ keepData: true });
    first = undefined;

    // By default the old key stays: the attempt's workflow history was written under it.
    const rotated = await caseflow(dataDir, 'secrets', 'rotate-master-key');
    expect(rotated).toMatchObject({ oauthAttempts: 1, droppedKeyIds: [] });
    const keyIds = readFileSync(path.join(dataDir, 'master.key'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => line.split(':')[0]);
    expect(keyIds).toEqual([rotated.currentKeyId, oldKeyId]);
    expect(await caseflow(dataDir, 'secrets', 'reencrypt')).toMatchObject({ oauthAttempts: 0 });

    // The same task queue: the attempt's workflow, still waiting for the redirect, runs on the new worker.
    const ring = readFileSync(path.join(dataDir, 'master.key'), 'utf8').trim();
    second = await startTestService({ dataDir, taskQueue, config: { secrets: { masterKey: ring } } });
    const [after] = await second.service.context.store.db
      .selectFrom('oauth_attempts')
      .select('verifier_ciphertext')
      .execute();
    expect(keyIdOf(after?.verifier_ciphertext ?? '')).toBe(rotated.currentKeyId);

    // The provider redirects to the address the attempt was made on; the service now listens elsewhere.
    const authorizationUrl = new URL(String(started.authorizationUrl));
    const redirect = new URL(authorizationUrl.searchParams.get('redirect_uri') ?? '');
    const consent = await consentByHttp(authorizationUrl.toString(), 'allow', (callback) =>
      callback.replace(redirect.origin, second?.url ?? ''),
    );
    expect(consent.outcome, consent.html).toBe('connected');
    const key = (await newKey(second, ['integration:read'], { organizationId, userId })).key;
    const check = await checkToken(second, String(started.connectionToken), key);
    expect(check.status).toBe('succeeded');
  });
});
