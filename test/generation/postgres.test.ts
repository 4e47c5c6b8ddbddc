import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answered, startTestService, unendingRateWindowMs, type TestService } from '../support/harness.js';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres.js';
import { readRun, startGeneration } from './process-support.js';

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
      key: first.key,
    });
  });
  afterAll(async () => {
    await second?.stop();
    await first?.stop();
    await schema?.drop();
  });

  it('starts on one API process, is read on both, and one window counts the requests of both', async () => {
    const { workflowId } = await answered(
      startGeneration(
        second,
        { prompt: 'Given a log excerpt, extract the numbers, compute the total and round it.' },
        { workspaceId: first.workspaceId },
      ),
      202,
    );
    let status = 'processing';
    let calls = 1;
    for (let i = 0; i < 9 && ['received', 'processing'].includes(status); i++) {
      await new Promise((r) => setTimeout(r, 700));
      const target = i % 2 === 0 ? first : second;
      const run = await answered(readRun(target, workflowId), 200);
      calls += 1;
      status = run.status;
    }
    expect(status).toBe('completed');
    const cancel = await first.client.POST('/api/v1/workflow/{workflowId}/run/cancel', {
      params: { path: { workflowId } },
      body: {},
    });
    calls += 1;
    expect(cancel.response.status).toBe(404);
    let last = cancel.response;
    for (; calls <= 12; calls++) last = (await readRun(calls % 2 ? first : second, randomUUID())).response;
    expect(last.status).toBe(429);
    expect(last.headers.get('retry-after')).toBeTruthy();
    expect((await readRun(second, randomUUID())).response.status).toBe(429);
  });
});
