import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startDevServer } from '../../src/temporal/dev-server.js';
import { headlessDevServer } from '../support/dev-server.js';

const ONE_PARTITION = 'matching.numTaskqueueReadPartitions=1';
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'caseflow-one-partition-'));
const marker = path.join(dataDir, 'temporal.db.one-partition');

afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** Starts a server on the test's database, returns whether it reads one partition per task queue, and stops it. */
async function readsOnePartition(fairness: boolean): Promise<boolean> {
  const server = await startDevServer({ ...(await headlessDevServer(dataDir)), fairness });
  try {
    return readFileSync(`/proc/${server.pid}/cmdline`, 'utf8').split('\0').includes(ONE_PARTITION);
  } finally {
    await server.stop();
  }
}

describe('one read partition per task queue while every task went to one (docs/performance.md)', () => {
  it('a database made with fairness is read from one partition, across restarts, until a start without fairness', async () => {
    expect(await readsOnePartition(true)).toBe(true);
    expect(existsSync(marker)).toBe(true);
    expect(await readsOnePartition(true)).toBe(true);
    // Without fairness new tasks go to any of four partitions: from then on all four are read.
    expect(await readsOnePartition(false)).toBe(false);
    expect(existsSync(marker)).toBe(false);
    expect(await readsOnePartition(true)).toBe(false);
  }, 240_000);
});
