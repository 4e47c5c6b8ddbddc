import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { CaseWorkLoad } from '../../src/cases/admission/case-work-load.js';
import { migrateToLatest, openStore, type Store } from '../../src/store/database.js';
import { ProcessLoadRepo } from '../../src/store/process-load-repo.js';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres.js';

/**
 * The fair share's saturation signal across processes (docs/concurrency.md#fair-share): processes that run
 * case work publish their event-loop load into the store, every process's admission reads the highest fresh one.
 * Several CaseWorkLoads on one store stand for several processes.
 */
const intervalMs = 500;
/** A row this old is a dead process's (5 intervals). */
const staleMs = 5 * intervalMs;

describe.each([
  ['SQLite on disk', false],
  ['Postgres', true],
])('the load of the processes that run case work (%s)', (_name, postgres) => {
  let schema: PostgresSchema | undefined;
  let store: Store;
  let repo: ProcessLoadRepo;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'caseflow-load-'));
  const warnings: string[] = [];
  const warn = (_err: unknown, message: string) => warnings.push(message);
  /** A process whose own loop reads `own`. */
  const loadOf = (own = 0) => new CaseWorkLoad(repo, { utilization: () => own }, intervalMs, warn);
  const rows = () => store.db.selectFrom('process_loads').selectAll().execute();
  /** A row as a process that stopped publishing `ms` ago left it. */
  const leftBehind = (id: string, utilization: number, ms: number) =>
    repo.report(id, utilization, new Date(Date.now() - ms).toISOString());

  beforeAll(async () => {
    schema = postgres ? await createPostgresSchema() : undefined;
    store = openStore(dataDir, schema?.url);
    await migrateToLatest(store.db);
    repo = new ProcessLoadRepo(store.db);
  });
  beforeEach(async () => {
    await store.db.deleteFrom('process_loads').execute();
  });
  afterAll(async () => {
    await store?.close();
    await schema?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("an API process reads the higher of its own loop and a worker's published load, not a dead process's row", async () => {
    const api = loadOf(0.3);
    const worker = loadOf(0.95);
    await leftBehind('dead', 1, 2 * staleMs);
    const stop = worker.publish();
    // The worker's own reading counts for it at once; the API process sees it once published and read.
    expect(worker.utilization()).toBe(0.95);
    await expect.poll(() => api.utilization(), { timeout: 5000, interval: 20 }).toBe(0.95);
    await leftBehind('quiet', 0.4, 0);
    await leftBehind('died just now', 1, 2 * staleMs);
    await new Promise((r) => setTimeout(r, intervalMs));
    expect(api.utilization()).toBe(0.95);

    // Stopped, the worker's row goes: the API process reads the quiet one (the dead ones are stale), then its own.
    await stop();
    expect((await rows()).map((r) => r.process_id).sort()).toEqual(['died just now', 'quiet']);
    await expect.poll(() => api.utilization(), { timeout: 5000, interval: 20 }).toBe(0.4);
    await store.db.deleteFrom('process_loads').where('process_id', '=', 'quiet').execute();
    await expect.poll(() => api.utilization(), { timeout: 5000, interval: 20 }).toBe(0.3);
    expect(warnings).toEqual([]);
  });

  it('a process that starts publishing prunes the rows of processes dead for longer than a row stays fresh', async () => {
    await leftBehind('long dead', 0.9, 2 * staleMs);
    await leftBehind('alive', 0.4, 0);
    const stop = loadOf(0.1).publish();
    await expect
      .poll(async () => (await rows()).map((r) => r.utilization).sort(), { timeout: 5000, interval: 20 })
      .toEqual([0.1, 0.4]);
    await stop();
  });

  it('reads the store at most once per quarter interval, however often admission asks, and never waits on it', async () => {
    const api = loadOf();
    const highest = vi.spyOn(repo, 'highest');
    const readings = Array.from({ length: 200 }, () => api.utilization());
    expect(highest).toHaveBeenCalledTimes(1);
    // The first call after a long time answers before the read does: without a fresh reading, nobody is loaded.
    expect(readings[0]).toBe(0);
    await new Promise((r) => setTimeout(r, intervalMs / 4 + 10));
    api.utilization();
    expect(highest).toHaveBeenCalledTimes(2);
    highest.mockRestore();
  });
});
