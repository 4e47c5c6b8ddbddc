import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { workflowBundlePath } from '../../src/temporal/worker.js';

/**
 * Histories recorded with the engine before it ran over CaseScheduler and the
 * node-kind registry (routes both ways with a callback, a failure after a
 * retry with a sibling stopped, the deadline, a cancel). Cases running at a
 * deploy replay on the new code, so the new workflow must issue the same
 * commands in the same order. Recorded from cases run on commit 8876e35
 * (`History.encode(await handle.fetchHistory())`), stored as binary protobuf:
 * the JSON form needs a protobufjs that the installed Temporal packages
 * disagree on.
 */
const dir = path.join(import.meta.dirname, 'histories');
const histories = readdirSync(dir).filter((f) => f.endsWith('.bin'));

describe('case-run replay', () => {
  it('has the recorded histories', () => {
    expect(histories.sort()).toEqual([
      'cancelled.bin',
      'failed.bin',
      'route-big.bin',
      'route-small.bin',
      'timed-out.bin',
    ]);
  });

  it.each(histories)('replays %s on the current workflow bundle', async (file) => {
    const history = temporal.api.history.v1.History.decode(readFileSync(path.join(dir, file)));
    await expect(
      Worker.runReplayHistory({ workflowBundle: { codePath: workflowBundlePath } }, history, `replay-${file}`),
    ).resolves.toBeUndefined();
  });
});
