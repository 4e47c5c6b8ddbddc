import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresSchema, postgresBaseUrl, type PostgresSchema } from '../support/postgres.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { createClient } from '../../src/client/index.js';
import { answered, refused, startTestService, type TestService } from '../support/harness.js';
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
    for (const [urlPath, send] of [
      ['/api/v1/me', () => svc.client.GET('/api/v1/me')],
      ['/api/v1/case', () => svc.client.POST('/api/v1/case', { body: { workflowId: wf.workflowId } })],
    ] as const) {
      const started = performance.now();
      const sent = send();
      const error = await refused(sent, 503);
      expect(performance.now() - started).toBeLessThan(8000);
      expect(error).toMatchObject({ statusCode: 503, errorCode: 'SERVICE_UNAVAILABLE', path: urlPath });
      expect(Number((await sent).response.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    const anonymous = createClient({ baseUrl: svc.url });
    expect(await refused(anonymous.GET('/readyz'), 503)).toMatchObject({ checks: { store: { ok: false } } });

    await proxy.restore();
    const caseId = await startCase(svc, wf.workflowId, { text: 'back' });
    expect((await waitForEnd(svc, caseId)).status).toBe('COMPLETED');
    await answered(anonymous.GET('/readyz'), 200);
  }, 120_000);
});
