import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/net/free-port.js';
import { createClient } from '../../src/client/index.js';
import { answered, startTestService, type TestService } from '../support/harness.js';
import { caseStatus, createWorkflow, execute, initiate, startCase, waitForEnd } from '../cases/support.js';
import { sleeper } from '../support/graphs.js';

/** Polls `probe` every 100 ms until it returns a value, or fails after `ms`. */
async function eventually<T>(what: string, ms: number, probe: () => Promise<T | undefined>): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function timed<T>(work: Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work;
  return { value, ms: performance.now() - started };
}

describe('the embedded Temporal server, supervised', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({
      embeddedTemporal: true,
      config: {
        temporal: {
          devServer: { port: await freePort(), uiPort: await freePort(), maxRestarts: 1, restartWindowMs: 600_000 },
        },
      },
    });
  }, 120_000);
  afterAll(async () => {
    await svc?.stop();
  });

  const devServerPid = () => svc.service.devServer?.pid() ?? 0;

  it('is started again after a kill -9; cases accepted before complete, executes meanwhile get a prompt 503', async () => {
    const wf = await createWorkflow(svc, sleeper(2));
    const accepted = await startCase(svc, wf.workflowId, { text: 'before' });
    const waiting = await initiate(svc, { workflowId: wf.workflowId });
    const killed = devServerPid();
    expect(killed).toBeGreaterThan(0);
    process.kill(killed, 'SIGKILL');
    await eventually('the engine marked down', 10_000, async () => (svc.service.engine.isUp() ? undefined : true));

    const anonymous = createClient({ baseUrl: svc.url });
    const ready = await timed(anonymous.GET('/readyz'));
    expect(ready.value.response.status).toBe(503);
    expect(ready.ms).toBeLessThan(1500);
    const refused = await timed(execute(svc, waiting, { inputs: { text: 'during' } }));
    expect(refused.value.status, refused.value.text).toBe(503);
    expect(refused.value.body).toMatchObject({ statusCode: 503, errorCode: 'SERVICE_UNAVAILABLE' });
    expect(refused.value.body.message).toContain('stays PENDING');
    expect(Number(refused.value.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.ms).toBeLessThan(1500);
    expect((await caseStatus(svc, waiting)).status).toBe('PENDING');

    // The probe may see the new server answer a moment before its supervisor has recorded it.
    await eventually('ready again on a new server', 60_000, async () =>
      devServerPid() !== killed && (await anonymous.GET('/readyz')).response.status === 200 ? true : undefined,
    );
    // /metrics is not a route of the document: a raw request.
    const metrics = (await svc.request('GET', '/metrics', { key: null })).text;
    expect(metrics).toMatch(/^caseflow_temporal_dev_server_restarts_total 1$/m);
    expect(metrics).toMatch(/^caseflow_temporal_engine_up 1$/m);

    expect((await waitForEnd(svc, accepted, 60_000)).status).toBe('COMPLETED');
    const retried = await execute(svc, waiting, { inputs: { text: 'after' } });
    expect(retried.status, retried.text).toBe(202);
    expect((await waitForEnd(svc, waiting, 60_000)).status).toBe('COMPLETED');
    await answered(anonymous.GET('/healthz'), 200);
  }, 180_000);

  it('fails liveness once it died more often than it may be restarted', async () => {
    process.kill(devServerPid(), 'SIGKILL');
    const health = await eventually('liveness failing', 10_000, async () => {
      const res = await createClient({ baseUrl: svc.url }).GET('/healthz');
      return res.response.status === 503 ? res.error : undefined;
    });
    expect(health).toMatchObject({ status: 'failed' });
    expect(svc.service.engine.current().state).toBe('failed');
    expect((await svc.request('GET', '/metrics', { key: null })).text).toMatch(/^caseflow_temporal_engine_up -1$/m);
  }, 60_000);
});
