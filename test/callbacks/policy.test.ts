import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refused, startTestService, unendingRateWindowMs, type TestService } from '../support/harness.js';
import { caseStatus, createWorkflow, execute, initiate, startCase, waitForEnd } from '../cases/support.js';
import { Graph } from '../support/graphs.js';
import { clientFor, newCaller } from '../support/keys.js';
import { ownUrlHost } from '../support/host-address.js';
import { Receiver } from './receiver.js';
import { callbacksOf } from './support.js';
import { startWorkflow } from '../../src/temporal/contracts/start.js';
import { callbackDeliveryContract } from '../../src/temporal/contracts/callback-delivery.js';

async function echoWorkflow(svc: TestService): Promise<string> {
  const g = new Graph();
  const input = g.input([{ name: 'greeting' }]);
  const output = g.output([{ name: 'greeting' }]);
  g.edge(input, output);
  return (await createWorkflow(svc, g, 'echo')).workflowId;
}

describe('callbackUrl under the outbound policy, as an attacker', () => {
  let svc: TestService;
  let workflowId: string;

  beforeAll(async () => {
    // No private range allowed: the operator's default.
    svc = await startTestService({ config: { outbound: { allowCidrs: '' } } });
    workflowId = await echoWorkflow(svc);
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it.each([
    ['the Temporal UI on loopback', 'http://127.0.0.1:8233/api/v1/namespaces'],
    ['cloud metadata', 'http://169.254.169.254/latest/meta-data/'],
    ['a name resolving to loopback', 'http://localhost:8233/'],
    ['an IPv4-mapped loopback', 'http://[::ffff:7f00:1]/'],
    ['a private range', 'http://10.0.0.5/hook', /private or loopback/],
    // Decided before any connection: the test never sends to this machine's non-loopback address.
    ["this machine's own (eth0) address", `http://${ownUrlHost()}:8080/hook`, /is an address of this host/],
    ['a benchmarking address', 'http://198.18.0.1/hook', /special-purpose .*198\.18\.0\.0\/15/],
    ['an IETF protocol address in decimal', 'http://3221225480/hook', /special-purpose .*192\.0\.0\.0\/24/],
    ['a 6to4 form of TEST-NET-1', 'http://[2002:c000:201::1]/hook', /carries 192\.0\.2\.1/],
  ])('refuses %s with 400 at execute and leaves the case PENDING', async (_name, callbackUrl, why?: RegExp) => {
    const caseId = await initiate(svc, { workflowId });
    const res = await execute(svc, caseId, { inputs: { greeting: 'x' }, callbackUrl });
    expect(res.status, res.text).toBe(400);
    expect(res.body).toMatchObject({
      statusCode: 400,
      errorCode: 'VALIDATION_ERROR',
      metadata: { fields: [{ field: 'body.callbackUrl', message: expect.stringMatching(why ?? /./) }] },
    });
    expect((await caseStatus(svc, caseId)).status).toBe('PENDING');
    expect(await callbacksOf(svc, caseId)).toEqual({ caseId, deliveries: [] });
  });
});

describe('callbacks with loopback allowed by the operator', () => {
  let svc: TestService;
  let workflowId: string;
  const hook = new Receiver();

  beforeAll(async () => {
    // Even everything allowed never opens metadata addresses.
    svc = await startTestService({
      config: {
        outbound: { allowCidrs: '0.0.0.0/0' },
        callbacks: {
          redeliverPerCase: 2,
          redeliverPerWorkspace: 3,
          redeliverWindowMs: unendingRateWindowMs,
          maxElapsedMs: 0,
        },
      },
    });
    workflowId = await echoWorkflow(svc);
    await hook.listen();
  });
  afterAll(async () => {
    await hook.close();
    await svc?.stop();
  });

  it('still refuses metadata addresses', async () => {
    const caseId = await initiate(svc, { workflowId });
    const res = await execute(svc, caseId, {
      inputs: { greeting: 'x' },
      callbackUrl: 'http://169.254.169.254/latest/meta-data/',
    });
    expect(res.status, res.text).toBe(400);
  });

  it('fails a delivery whose address is refused at delivery time, without connecting', async () => {
    const caseId = crypto.randomUUID();
    const deliveryId = crypto.randomUUID();
    const handle = await startWorkflow(svc.service.context.temporal.client.workflow, callbackDeliveryContract, {
      taskQueue: svc.taskQueue,
      workflowId: `callback-${caseId}`,
      args: [
        {
          deliveryId,
          caseId,
          workspaceId: svc.workspaceId,
          callbackUrl: 'http://169.254.169.254/latest/meta-data/',
          body: { caseId, status: 'COMPLETED', results: {} },
        },
      ],
    });
    expect(await handle.result()).toMatchObject({ status: 'failed', attempts: 1 });
    const listed = await callbacksOf(svc, caseId);
    expect(listed.deliveries[0]!.attempts).toEqual([
      expect.objectContaining({ responseStatus: null, responseBody: null, error: expect.stringContaining('metadata') }),
    ]);
  });

  it('rate limits redeliver per case and per workspace with Retry-After, and hides callbacks from another organization', async () => {
    const first = await startCase(svc, workflowId, { greeting: 'a' }, { callbackUrl: hook.url });
    const second = await startCase(svc, workflowId, { greeting: 'b' }, { callbackUrl: hook.url });
    await waitForEnd(svc, first);
    await waitForEnd(svc, second);
    await expect.poll(() => hook.received.length, { timeout: 15_000 }).toBe(2);

    // Raw: the test reads the RateLimit and Retry-After headers.
    const redeliver = (caseId: string) => svc.request('POST', `/api/v1/case/${caseId}/callbacks/redeliver`);
    const ok = await redeliver(first);
    expect(ok.status, ok.text).toBe(202);
    expect(ok.headers.get('ratelimit')).toContain('"case";r=1');
    expect((await redeliver(first)).status).toBe(202);
    const limited = await redeliver(first);
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ statusCode: 429, errorCode: 'RATE_LIMITED' });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);

    // The workspace's limit (3) is reached by another case's redelivery.
    expect((await redeliver(second)).status).toBe(202);
    const workspaceLimited = await redeliver(second);
    expect(workspaceLimited.status).toBe(429);
    expect(workspaceLimited.body.message).toContain('workspace');

    const attacker = clientFor(svc, (await newCaller(svc, ['case:full'])).key);
    const path = { params: { path: { caseId: first } } };
    const notFound = { statusCode: 404, errorCode: 'NOT_FOUND' };
    expect(await refused(attacker.GET('/api/v1/case/{caseId}/callbacks', path), 404)).toMatchObject(notFound);
    expect(await refused(attacker.POST('/api/v1/case/{caseId}/callbacks/redeliver', path), 404)).toMatchObject(
      notFound,
    );
  });
});
