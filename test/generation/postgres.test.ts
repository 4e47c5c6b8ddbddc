import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, startTestService, unendingRateWindowMs, type TestService } from '../support/harness.js';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres.js';

/** Two API processes over one Postgres database: run records and the key's rate limit are shared. */
describe('generation on Postgres, across API processes', () => {
  let schema: PostgresSchema;
  let first: TestService;
  let second: TestService;
  beforeAll(async () => {
    schema = await createPostgresSchema();
    const config = { generation: { rateLimitMax: 12, rateLimitWindowMs: unendingRateWindowMs } };
    first = await startTestService({ databaseUrl: schema.url, config });
    // One data directory, as processes of one deployment share their master key (it seals Temporal payloads too).
    second = await startTestService({
      databaseUrl: schema.url,
      config,
      role: 'api',
      taskQueue: first.taskQueue,
      dataDir: first.dataDir,
    });
  });
  afterAll(async () => {
    await second?.stop();
    await first?.stop();
    await schema?.drop();
  });

  it('starts on one API process, is read on both, and one window counts the requests of both', async () => {
    const started = await http(`${second.url}/api/v1/workflow/generate`, 'POST', {
      key: first.key,
      headers: { 'x-workspace-id': first.workspaceId },
      body: { prompt: 'Given a log excerpt, extract the numbers, compute the total and round it.' },
    });
    expect(started.status, started.text).toBe(202);
    const workflowId = String(started.body.workflowId);
    let status = 'processing';
    let calls = 1;
    for (let i = 0; i < 9 && ['received', 'processing'].includes(status); i++) {
      await new Promise((r) => setTimeout(r, 700));
      const target = i % 2 === 0 ? first : second;
      const res = await http(`${target.url}/api/v1/workflow/${workflowId}/run`, 'GET', { key: first.key });
      calls += 1;
      expect(res.status, res.text).toBe(200);
      status = String(res.body.status);
    }
    expect(status).toBe('completed');
    const cancel = await http(`${first.url}/api/v1/workflow/${workflowId}/run/cancel`, 'POST', {
      key: first.key,
      body: {},
    });
    calls += 1;
    expect(cancel.status).toBe(404);
    let last = cancel;
    for (; calls <= 12; calls++)
      last = await http(`${(calls % 2 ? first : second).url}/api/v1/workflow/${randomUUID()}/run`, 'GET', {
        key: first.key,
      });
    expect(last.status).toBe(429);
    expect(last.headers.get('retry-after')).toBeTruthy();
    const other = await http(`${second.url}/api/v1/workflow/${randomUUID()}/run`, 'GET', { key: first.key });
    expect(other.status).toBe(429);
  });
});
