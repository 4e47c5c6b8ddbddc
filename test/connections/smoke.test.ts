import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownUrlHost } from '../support/host-address.js';
import { answered, startTestService, type TestService } from '../support/harness.js';
import {
  authorIntegration,
  connect,
  connection,
  historyText,
  localServer,
  type ConnectionInput,
  type LocalServer,
} from './support.js';

const secret = 'sk-live-smoke-0123456789';
const body300 = `${'é'.repeat(150)}${'x'.repeat(150)}`;
let svc: TestService;
let server: LocalServer;

beforeAll(async () => {
  svc = await startTestService({ config: { connections: { smokeTestTimeoutMs: 1500 } } });
  server = await localServer((req, res) => {
    const route = req.url.split('?')[0];
    if (route === '/ok') res.writeHead(200).end('fine');
    else if (route === '/redirect') res.writeHead(302, { location: 'http://169.254.169.254/' }).end();
    else if (route === '/unauthorized') res.writeHead(401).end('bad key');
    else if (route === '/broken') res.writeHead(500).end(body300);
    else if (route === '/echo') res.writeHead(403).end(`rejected key ${String(req.headers['x-api-key'])} for you`);
    else if (route === '/slow') setTimeout(() => res.writeHead(200).end('late'), 5000);
    else res.writeHead(404).end('no route');
  });
});
afterAll(async () => {
  await server?.close();
  await svc?.stop();
});

async function smoke(
  path: string,
  options: Parameters<typeof authorIntegration>[2] = {},
  overrides: Partial<ConnectionInput> = {},
) {
  const integration = await authorIntegration(svc, svc.key, {
    endpoint: path.startsWith('http') ? path : `${server.url}${path}`,
    ...options,
  });
  const res = await answered(
    connect(
      svc,
      connection(integration, svc.workspaceId, {
        credentialData: { api_key: secret },
        testActionVersionId: integration.actionVersionId,
        ...overrides,
      }),
    ),
    201,
  );
  expect(JSON.stringify(res)).not.toContain(secret);
  return res;
}

describe('smoke test', () => {
  it('200 passes, with the api key sent as X-API-Key; the outcome is stored on the connection', async () => {
    const outcome = await smoke('/ok');
    expect(outcome).toMatchObject({ testPassed: true, testError: null });
    const request = server.received.at(-1);
    expect(request).toMatchObject({ method: 'GET', url: '/ok' });
    expect(request?.headers['x-api-key']).toBe(secret);
    const read = await answered(
      svc.client.GET('/api/v1/connection/{connectionId}', {
        params: { path: { connectionId: String(outcome.activeIntegrationId) } },
      }),
      200,
    );
    expect(read).toMatchObject({ testPassed: true, testError: null });
  });

  it('302 passes without following the redirect', async () => {
    const before = server.received.length;
    expect(await smoke('/redirect')).toMatchObject({ testPassed: true, testError: null });
    expect(server.received.length).toBe(before + 1);
  });

  it('401 fails with the status and body', async () => {
    expect(await smoke('/unauthorized')).toEqual(
      expect.objectContaining({ testPassed: false, testError: 'HTTP 401: bad key' }),
    );
  });

  it('500 with a 300-character body quotes exactly its first 200 characters', async () => {
    const outcome = await smoke('/broken');
    expect(outcome.testPassed).toBe(false);
    expect(outcome.testError).toBe(`HTTP 500: ${Array.from(body300).slice(0, 200).join('')}`);
  });

  it('an endpoint echoing the key gets it redacted from testError', async () => {
    const outcome = await smoke('/echo');
    expect(outcome).toMatchObject({ testPassed: false, testError: 'HTTP 403: rejected key [redacted] for you' });
  });

  it('a refused connection, a slow endpoint and the outbound policy fail with the network error', async () => {
    const closed = await localServer((_req, res) => res.end());
    const closedUrl = `${closed.url}/gone`;
    await closed.close();
    const refused = await smoke(closedUrl);
    expect(refused.testPassed).toBe(false);
    expect(refused.testError).toMatch(/^Network error: .*ECONNREFUSED/);

    const started = Date.now();
    const slow = await smoke('/slow');
    expect(slow.testPassed).toBe(false);
    expect(slow.testError).toMatch(/^Network error: .*[Tt]imeout/);
    expect(Date.now() - started).toBeLessThan(5000);

    const metadata = await smoke('http://169.254.169.254/latest/meta-data');
    expect(metadata).toMatchObject({ testPassed: false });
    expect(metadata.testError).toMatch(/^Refused by the outbound policy: .*link-local/);
  });

  it("an endpoint at this machine's own (eth0) address or a special-purpose range is refused by the policy, not attempted", async () => {
    // Refused at the policy's decision: nothing is sent to the machine's non-loopback address.
    const own = await smoke(`http://${ownUrlHost()}:${new URL(server.url).port}/ok`);
    expect(own).toMatchObject({ testPassed: false });
    expect(own.testError).toMatch(/^Refused by the outbound policy: \S+ is an address of this host \(\S+\)$/);
    const benchmarking = await smoke('http://198.18.0.1/ok');
    expect(benchmarking.testError).toMatch(/^Refused by the outbound policy: .*special-purpose.*198\.18\.0\.0\/15/);
  });

  it('applies bearer tokens and custom headers as the authType says; testInputData is POSTed as JSON', async () => {
    await smoke(
      '/ok',
      {
        authType: 'access_token',
        inputs: { access_token: { displayName: 'Token', variableName: 'access_token', type: 'str' } },
      },
      { credentialData: { access_token: 'tok-abcdef' } },
    );
    expect(server.received.at(-1)?.headers.authorization).toBe('Bearer tok-abcdef');

    await smoke(
      '/ok',
      {
        authType: 'custom_header_auth',
        inputs: {
          header_name: { displayName: 'Header', variableName: 'header_name', type: 'str' },
          header_value: { displayName: 'Value', variableName: 'header_value', type: 'str' },
        },
      },
      { credentialData: { header_name: 'X-Acme-Token', header_value: 'acme-secret-1' }, testInputData: { ping: 1 } },
    );
    const last = server.received.at(-1);
    expect(last?.headers['x-acme-token']).toBe('acme-secret-1');
    expect(last?.method).toBe('POST');
    expect(JSON.parse(last?.body ?? '{}')).toEqual({ ping: 1 });
  });

  it('no testActionVersionId: no call, testPassed null', async () => {
    const integration = await authorIntegration(svc, svc.key, { endpoint: `${server.url}/ok` });
    const before = server.received.length;
    const res = await answered(connect(svc, connection(integration, svc.workspaceId)), 201);
    expect(res).toMatchObject({ testPassed: null, testError: null });
    expect(server.received.length).toBe(before);
  });

  it('runs as a Temporal workflow whose history holds no secret', async () => {
    const outcome = await smoke('/ok');
    const history = await historyText(svc, `connection-smoke-${outcome.activeIntegrationId}`);
    expect(history).toContain('smokeTestConnection');
    expect(history).toContain(String(outcome.activeIntegrationId));
    expect(history).toContain('"testPassed":true');
    expect(history).not.toContain(secret);
  });
});
