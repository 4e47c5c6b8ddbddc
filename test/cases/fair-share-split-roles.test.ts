import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.js';
import { exited, WorkerProcesses } from '../support/worker-process.js';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres.js';
import { sleepingOrganization } from './admission-support.js';

/**
 * The fair share's saturation gate in split roles (docs/concurrency.md#fair-share): an API-only process admits,
 * a worker process (the built CLI, its own event loop) runs the cases. The worker publishes its loop's load into
 * the store; the API process's admission engages the share on it, though its own loop is idle, and ignores the
 * row of a worker that died. A budget of 3, floor 1: a share of 1 while two organizations are active.
 */
const threshold = 0.9;
const fairShare = {
  enabled: true,
  budget: 3,
  floor: 1,
  activeWindowMs: 60_000,
  runnableMs: 60_000,
  saturation: threshold,
  loadIntervalMs: 500,
};

/**
 * Preloaded into a worker: the first SIGUSR2 keeps its event loop busy ~99% of the time (as a burst of case work
 * would), the next one stops that. Signalled once the worker is up, so it starts at its own pace.
 */
const spinner = `data:text/javascript,${encodeURIComponent(`
let spinning;
process.on('SIGUSR2', () => {
  if (spinning) return void clearInterval(spinning);
  spinning = setInterval(() => {
    const until = performance.now() + 200;
    while (performance.now() < until);
  }, 1);
});`)}`;

describe.each([
  ['SQLite on disk', false],
  ['Postgres', true],
])('fair share in split roles (%s)', (_name, postgres) => {
  let schema: PostgresSchema | undefined;
  let svc: TestService;
  const workers = new WorkerProcesses(() => svc);

  beforeAll(async () => {
    schema = postgres ? await createPostgresSchema() : undefined;
    svc = await startTestService({
      role: 'api',
      ...(schema ? { databaseUrl: schema.url } : {}),
      config: { cases: { admissionIntervalMs: 300, fairShare } },
    });
  });
  afterAll(async () => {
    await workers.stopAll();
    await svc?.stop();
    await schema?.drop();
  });

  /** What the API process's admission reads now (its gauge). */
  const utilization = async () => {
    const gauge = svc.service.context.metrics.registry.getSingleMetric('caseflow_admission_event_loop_utilization');
    return (await gauge?.get())?.values[0]?.value ?? Number.NaN;
  };
  const publishedRows = async () =>
    (await svc.service.context.store.db.selectFrom('process_loads').select('utilization').execute()).map(
      (r) => r.utilization,
    );
  /** A worker whose loop is kept busy, once its load is published (it has started). */
  const busyWorker = async (): Promise<ChildProcess> => {
    const before = (await publishedRows()).length;
    const child = workers.start(['--import', spinner]);
    await expect.poll(async () => (await publishedRows()).length, { timeout: 60_000, interval: 200 }).toBe(before + 1);
    child.kill('SIGUSR2');
    await expect.poll(utilization, { timeout: 30_000, interval: 200 }).toBeGreaterThanOrEqual(threshold);
    return child;
  };

  it("engages the share on the worker's load though the API process's loop is idle, and the queue drains after", async () => {
    const a = await sleepingOrganization(svc, 5);
    const b = await sleepingOrganization(svc, 1);
    const worker = await busyWorker();
    expect((await b.start('b')).status).toBe('RUNNING');
    const started = [];
    for (let i = 0; i < 3; i++) started.push(await a.start(`a${i}`));
    expect(started.map((c) => c.status)).toEqual(['RUNNING', 'QUEUED', 'QUEUED']);

    worker.kill('SIGUSR2');
    await expect.poll(utilization, { timeout: 30_000, interval: 200 }).toBeLessThan(threshold);
    const ends = await Promise.all(started.map((c) => a.end(c.caseId)));
    expect(ends.map((e) => e.status)).toEqual(['COMPLETED', 'COMPLETED', 'COMPLETED']);
  }, 240_000);

  it("ignores a dead worker's row once it is stale", async () => {
    const worker = await busyWorker();
    worker.kill('SIGKILL');
    await exited(worker);
    // Its saturated row stays behind (nothing removed it), and stops counting within 5 intervals.
    expect(Math.max(...(await publishedRows()))).toBeGreaterThanOrEqual(threshold);
    await expect.poll(utilization, { timeout: 15_000, interval: 200 }).toBeLessThan(threshold);
    expect(Math.max(...(await publishedRows()))).toBeGreaterThanOrEqual(threshold);
  }, 180_000);
});
