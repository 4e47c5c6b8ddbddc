import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RateLimitedError, RateLimiter, type Quota } from '../../src/rate-limits/rate-limiter.js';
import { openStore, type Store } from '../../src/store/database.js';
import { RateLimitRepo } from '../../src/store/rate-limit-repo.js';
import { createWorkflow, startCase, waitForEnd } from '../cases/support.js';
import { Graph } from '../support/graphs.js';
import { Receiver } from '../callbacks/receiver.js';
import {
  http,
  startTestService,
  unendingRateWindowMs,
  type TestResponse,
  type TestService,
} from '../support/harness.js';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres.js';

const config = {
  callbacks: {
    redeliverPerCase: 3,
    redeliverPerWorkspace: 4,
    redeliverWindowMs: unendingRateWindowMs,
    maxElapsedMs: 0,
  },
  generation: { rateLimitMax: 4, rateLimitWindowMs: unendingRateWindowMs },
};

describe.each([
  ['SQLite on disk', false],
  ['Postgres', true],
])('rate limits of two API instances on one store (%s)', (_name, postgres) => {
  let schema: PostgresSchema | undefined;
  let first: TestService;
  let second: TestService;
  const stores: Store[] = [];
  const hook = new Receiver();

  beforeAll(async () => {
    schema = postgres ? await createPostgresSchema() : undefined;
    const databaseUrl = schema?.url;
    first = await startTestService({ config, ...(databaseUrl ? { databaseUrl } : {}) });
    // One data directory (master key, and the SQLite file when there is no Postgres), another app instance.
    second = await startTestService({
      config,
      role: 'api',
      dataDir: first.dataDir,
      taskQueue: first.taskQueue,
      ...(databaseUrl ? { databaseUrl } : {}),
    });
    await hook.listen();
  });
  afterAll(async () => {
    await Promise.all(stores.map((store) => store.close()));
    await hook.close();
    await second?.stop();
    await first?.stop();
    await schema?.drop();
  });

  /** A request with the bootstrap key, to `first` or `second` in turn. */
  const call = (i: number, method: string, path: string): Promise<TestResponse> =>
    http(`${(i % 2 === 0 ? first : second).url}${path}`, method, { key: first.key });

  it('counts redeliveries per case and per workspace across instances; a refused one counts in neither', async () => {
    const g = new Graph();
    g.edge(g.input([{ name: 'greeting' }]), g.output([{ name: 'greeting' }]));
    const { workflowId } = await createWorkflow(first, g, 'echo');
    const [a, b] = [
      await startCase(first, workflowId, { greeting: 'a' }, { callbackUrl: hook.url }),
      await startCase(first, workflowId, { greeting: 'b' }, { callbackUrl: hook.url }),
    ];
    await waitForEnd(first, a);
    await waitForEnd(first, b);
    await expect.poll(() => hook.received.length, { timeout: 15_000 }).toBe(2);
    const redeliver = (i: number, caseId: string) => call(i, 'POST', `/api/v1/case/${caseId}/callbacks/redeliver`);

    for (let i = 0; i < 3; i++) {
      const res = await redeliver(i, a);
      expect(res.status, res.text).toBe(202);
      expect(res.headers.get('ratelimit')).toMatch(
        new RegExp(`^"case";r=${2 - i};t=\\d+, "workspace";r=${3 - i};t=\\d+$`),
      );
    }
    const caseLimited = await redeliver(3, a);
    expect(caseLimited.status).toBe(429);
    expect(caseLimited.body).toMatchObject({ statusCode: 429, errorCode: 'RATE_LIMITED' });
    expect(caseLimited.body.message).toContain('over the case limit');
    expect(Number(caseLimited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(caseLimited.headers.get('ratelimit-policy')).toBe(
      `"case";q=3;w=${unendingRateWindowMs / 1000}, "workspace";q=4;w=${unendingRateWindowMs / 1000}`,
    );

    // The refused redelivery left the workspace's last unit for another case, on either instance.
    expect((await redeliver(4, b)).status).toBe(202);
    const workspaceLimited = await redeliver(5, b);
    expect(workspaceLimited.status).toBe(429);
    expect(workspaceLimited.body.message).toContain('over the workspace limit');
    expect(workspaceLimited.headers.get('ratelimit')).toMatch(/^"case";r=2;t=\d+, "workspace";r=0;t=\d+$/);
  });

  it('counts generation requests per key across instances', async () => {
    const path = `/api/v1/workflow/${randomUUID()}/run`;
    for (let i = 0; i < config.generation.rateLimitMax; i++) {
      const res = await call(i, 'GET', path);
      expect(res.status, res.text).toBe(404);
      expect(res.headers.get('ratelimit')).toMatch(new RegExp(`^"generation";r=${3 - i};t=\\d+$`));
    }
    for (const i of [4, 5]) {
      const limited = await call(i, 'GET', path);
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(limited.headers.get('ratelimit')).toMatch(/^"generation";r=0;t=\d+$/);
    }
  });

  /** A limiter over a store handle of its own, as another process would have. */
  const limiter = (now?: () => number) => {
    const store = openStore(first.dataDir, schema?.url);
    stores.push(store);
    return { store, limiter: new RateLimiter(new RateLimitRepo(store.db), now) };
  };

  it('never admits more than the limit to concurrent requests from two processes', async () => {
    const quota: Quota[] = [{ name: 'burst', key: `burst:${randomUUID()}`, limit: 10, windowMs: 60_000 }];
    const [one, two] = [limiter().limiter, limiter().limiter];
    const outcomes = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        (i % 2 ? one : two).take('bursts', quota).then(
          () => 'admitted',
          (err: unknown) => (err instanceof RateLimitedError ? 'refused' : err),
        ),
      ),
    );
    expect(outcomes.filter((o) => o === 'admitted')).toHaveLength(10);
    expect(outcomes.filter((o) => o === 'refused')).toHaveLength(30);
  });

  it('prunes ended windows and keeps running ones, whatever their length', async () => {
    const ended = `ended:${randomUUID()}`;
    const running = `running:${randomUUID()}`;
    // Windows align to the clock: both clocks sit in the previous hour, so the hour window is running at the later
    // one whatever minute the test runs in, and nothing of the other tests (windows of now) is old enough to prune.
    const previousHour = (Math.floor(Date.now() / 3_600_000) - 1) * 3_600_000;
    const past = limiter(() => previousHour + 60_000);
    await past.limiter.take('requests', [{ name: 'x', key: ended, limit: 5, windowMs: 60_000 }]);
    await past.limiter.take('requests', [{ name: 'x', key: running, limit: 5, windowMs: 3_600_000 }]);
    const buckets = () =>
      past.store.db
        .selectFrom('rate_limit_windows')
        .select('bucket')
        .where('bucket', 'in', [ended, running])
        .execute()
        .then((rows) => rows.map((r) => r.bucket).sort());
    expect(await buckets()).toEqual([ended, running].sort());
    // A fresh limiter prunes on its first request.
    const later = limiter(() => previousHour + 660_000).limiter;
    await later.take('requests', [{ name: 'x', key: `other:${randomUUID()}`, limit: 5, windowMs: 1000 }]);
    expect(await buckets()).toEqual([running]);
  });
});
