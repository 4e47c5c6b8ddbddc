import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresSchema, postgresBaseUrl, type PostgresSchema } from '../support/postgres.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { startTestService, type TestService } from '../support/harness.js';
import { createWorkflow, startCase, waitForEnd } from '../cases/support.js';
import { sleeper } from '../support/graphs.js';

describe('the Postgres store going away and coming back', () => {
  let schema: PostgresSchema;
  let proxy: TcpProxy;
  let svc: TestService;
  beforeAll(async () => {
    schema = await createPostgresSchema();
    const direct = new URL(postgresBaseUrl);
    proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
    const viaProxy = new URL(schema.url);
    viaProxy.host = `127.0.0.1:${proxy.port}`;
    // The key cache would answer authentication from memory and hide the outage from the first requests.
    svc = await startTestService({ databaseUrl: viaProxy.toString(), config: { keyCacheMs: 0 } });
  }, 120_000);
  afterAll(async () => {
    await svc?.stop();
    await proxy?.close();
    await schema?.drop();
  });

  it('answers 503 in the error shape while it is gone, never hangs, and works again with no restart', async () => {
    const wf = await createWorkflow(svc, sleeper(0));
    await proxy.cut();
    for (const [method, urlPath] of [
      ['GET', '/api/v1/me'],
      ['POST', '/api/v1/case'],
    ] as const) {
      const started = performance.now();
      const res = await svc.request(method, urlPath, {
        body: method === 'POST' ? { workflowId: wf.workflowId } : undefined,
      });
      expect(performance.now() - started).toBeLessThan(8000);
      expect(res.status, res.text).toBe(503);
      expect(res.body).toMatchObject({ statusCode: 503, errorCode: 'SERVICE_UNAVAILABLE', path: urlPath });
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    const ready = await svc.request('GET', '/readyz', { key: null });
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({ checks: { store: { ok: false } } });

    await proxy.restore();
    const caseId = await startCase(svc, wf.workflowId, { text: 'back' });
    expect((await waitForEnd(svc, caseId)).status).toBe('COMPLETED');
    expect((await svc.request('GET', '/readyz', { key: null })).status).toBe(200);
  }, 120_000);
});
