import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { Client } from '@temporalio/client';
import { createActivities } from '../../activities/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { oauthAuthorizationWorkflowId, oauthRefreshWorkflowId } from '../../src/temporal/contracts/oauth.js';
import { temporalTestServerPath } from '../../src/temporal/binaries.js';
import { workflowBundlePath } from '../../src/temporal/worker.js';
import { encryptingDataConverter } from '../../src/temporal/data-converter.js';
import { startTestService, type TestService } from '../support/harness.js';
import { FakeOAuthProvider } from './fake-oauth-provider.js';
import { checkToken, connectOAuth, consentByHttp, eventually, noConnection } from './oauth-support.js';
import { authorIntegration, type Integration } from './support.js';
import { oauthRefreshStatusQuery } from '../../src/temporal/contracts/oauth.js';

/**
 * The OAuth timers under Temporal's time-skipping test server: the service's
 * API runs against it with a worker over the same services (the test
 * environment owns Temporal's runtime, so the worker is made here), and time
 * moves only when the test says (env.sleep): 10 minutes and a day pass in an
 * instant, and exactly.
 */
let env: TestWorkflowEnvironment;
let svc: TestService;
let worker: Worker;
/** The environment's client cannot open sealed payloads: this one has the service's codec. */
let client: Client;
let running: Promise<void>;
let integration: Integration;
const provider = new FakeOAuthProvider();

beforeAll(async () => {
  const serverPath = temporalTestServerPath();
  if (!serverPath) throw new Error('temporal-test-server not installed (.venv): run npm ci');
  env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: serverPath } },
  });
  await provider.start();
  svc = await startTestService({ temporalAddress: env.address, role: 'api' });
  const { config, logger, python, services, temporal, tracing } = svc.service.context;
  worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue: svc.taskQueue,
    workflowBundle: { codePath: workflowBundlePath },
    // The service's client seals payloads: its worker must open them.
    dataConverter: encryptingDataConverter(temporal.codec),
    activities: createActivities({ config, logger, python, services, tracing }),
    shutdownGraceTime: '2s',
  });
  running = worker.run();
  client = new Client({ connection: env.connection, dataConverter: encryptingDataConverter(temporal.codec) });
  integration = await authorIntegration(svc, svc.key, { authType: 'oauth', inputs: provider.templateInputs() });
}, 180_000);
afterAll(async () => {
  worker?.shutdown();
  await running;
  await svc?.stop();
  await provider.stop();
  await env?.teardown();
});

async function startConnect(): Promise<{ authorizationUrl: string; connectionToken: string; credentialId: string }> {
  const res = await connectOAuth(svc, integration, provider);
  return {
    authorizationUrl: String(res.authorizationUrl),
    connectionToken: String(res.connectionToken),
    credentialId: res.activeCredentialId,
  };
}

const latestAttemptId = async () =>
  (
    await svc.service.context.store.db
      .selectFrom('oauth_attempts')
      .select('id')
      .orderBy('created_at', 'desc')
      .executeTakeFirstOrThrow()
  ).id;

describe('OAuth timers (time-skipping)', () => {
  it('10 minutes without a callback: the attempt workflow records expired; a late redirect changes nothing', async () => {
    const started = await startConnect();
    const attemptId = await latestAttemptId();
    await env.sleep('9 minutes');
    expect((await checkToken(svc, started.connectionToken)).status).toBe('pending');
    await env.sleep('2 minutes');
    const handle = client.workflow.getHandle(oauthAuthorizationWorkflowId(attemptId));
    expect(await handle.result()).toBe('expired');
    // Wall-clock time has not moved: only the workflow's timer can have expired it.
    expect(await checkToken(svc, started.connectionToken)).toEqual({ status: 'expired', ...noConnection });
    const late = await consentByHttp(started.authorizationUrl, 'allow');
    expect(late.status).toBe(410);
    expect(late.outcome).toBe('expired');
    expect(provider.tokenRequests.filter((r) => r.grantType === 'authorization_code')).toHaveLength(0);
  });

  it('refreshes ahead of expiry (15-minute margin of a 1-hour token), then at least daily when idle', async () => {
    provider.expiresIn = 3600;
    const started = await startConnect();
    const page = await consentByHttp(started.authorizationUrl, 'allow');
    expect(page.outcome, page.html).toBe('connected');
    // (No waiting on workflow results here: that lets the test server skip time.)
    expect((await checkToken(svc, started.connectionToken)).status).toBe('succeeded');

    await env.sleep('44 minutes');
    expect(provider.refreshCount).toBe(0);
    // The next answer carries no expires_in: from then on only the daily idle refresh applies.
    provider.expiresIn = 0;
    await env.sleep('2 minutes');
    await eventually(
      async () => provider.refreshCount,
      (n) => n === 1,
      'the refresh at 45 minutes',
    );

    const refresh = client.workflow.getHandle(oauthRefreshWorkflowId(started.credentialId));
    await eventually(
      () => refresh.query(oauthRefreshStatusQuery),
      (s) => s.generation === 2,
      'generation 2',
    );
    await env.sleep('23 hours');
    expect(provider.refreshCount).toBe(1);
    await env.sleep('2 hours');
    await eventually(
      async () => provider.refreshCount,
      (n) => n === 2,
      'the daily refresh',
    );
    // Each refresh rotated the refresh token and the next one used it.
    const sent = provider.tokenRequests
      .filter((r) => r.grantType === 'refresh_token')
      .map((r) => r.params.refresh_token);
    expect(new Set(sent).size).toBe(2);
  });
});
