import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { defaultPayloadConverter } from '@temporalio/common';
import { caseRunChanges, caseRunRevision } from '../../src/domain/case-run-changes.js';
import { defaultMaxParallelNodes, type CaseRunInput } from '../../src/domain/cases.js';
import { workflowBundlePath } from '../../src/temporal/worker.js';

/**
 * Cases running at a deploy replay on the new code, so the new workflow must
 * issue the same commands in the same order. Recorded with
 * `History.encode(await handle.fetchHistory())` and stored as binary protobuf
 * (the JSON form needs a protobufjs that the installed Temporal packages
 * disagree on):
 * - on commit 8876e35, before the engine ran over CaseScheduler and the
 *   node-kind registry: routes both ways with a callback, a failure after a
 *   retry with a sibling stopped, the deadline, a cancel;
 * - on commit 5178055, before search attributes and node summaries:
 *   input → python → output completed as a local and as a regular activity,
 *   and failed, each with a callback (`local-*`, `regular-*`);
 * - after them (`tagged-*`): the same runs tagged with our search attributes,
 *   the case status set at the end behind the `case-status-search-attribute`
 *   patch, the failed one's callback retry workflow started with the tags;
 * - on commit cfc515a, before the per-case cap on nodes running at once
 *   (`case-node-concurrency-cap`): ten parallel Python nodes, as local and as
 *   regular activities (`parallel-*`), all scheduled together;
 * - on commit cfc515a (`first-attempt-*`), before the final write and the
 *   callback's first attempt became one local activity: input → python →
 *   output with the first attempt delivered in the run, and refused (503)
 *   so the retry workflow started.
 * - on commit 8afbb5c (`marked-*`), before runs recorded the revision of the
 *   code that started them: every change asked `patched()`, a marker and a
 *   TemporalChangeVersion upsert each: delivered, refused (retry workflow
 *   started), ten parallel Python nodes under the cap;
 * - after it (`revision-*`): the same three runs started with revision 4,
 *   every change in force and no patch marker.
 * - with the `call-workflow-child-case` change (`subflow-*`, revision 5,
 *   payloads decrypted): a parent whose call_workflow node's child case
 *   completed, failed, and was cancelled with its parent.
 * - on commit 4242847 (`turnless-*`, revision 9), before node outcomes took
 *   turns (`case-node-outcomes-in-turn`), over mocked activities (plain JSON
 *   payloads): a human task, a call_workflow node and its child, a route,
 *   four parallel branches with busy and failed nodes; and `turnless-apart`,
 *   two parallel local activities that ended apart (the first's successor a
 *   regular activity, the second turned away as busy), which replays on no
 *   path: the nondeterminism error of issue 31.
 * - after it (`turns-*`, revision 10, recorded by replay-live.test.ts): the
 *   same kinds, the deadline, a cancel, and the two runs that end apart (busy
 *   and failed), which replay only with the turns.
 * - with `case-last-node-and-end-fused` (`fused-*`, revision 12, recorded by
 *   replay-live.test.ts): the last node and the case's end in one local
 *   activity, after a chain, a route, a busy and a failed attempt, a human
 *   task, and as a child case's end.
 *
 * During a rolling deploy a run started by new code (with a revision) can
 * have its tasks taken by a worker of older code, which asks `patched()` and
 * writes the markers. The `marked-*` histories with their start input given
 * revision 4 are such runs, exactly as an 8afbb5c worker records them.
 */
const dir = path.join(import.meta.dirname, 'histories');
/** The one recorded history no code replays (see above): kept to show the error the turns are for. */
const unreplayable = 'turnless-apart.bin';
/** Replayed without turns, the busy node's timer comes where the history has its sibling's activity. */
const apartError =
  /Nondeterminism error: Timer machine does not handle this event: HistoryEvent\(id: \d+, ActivityTaskScheduled\)/;
const histories = readdirSync(dir).filter((f) => f.endsWith('.bin'));

/** A recorded history whose run had been started with `revision` in its input. */
function startedWithRevision(file: string, revision: number): temporal.api.history.v1.History {
  const history = temporal.api.history.v1.History.decode(readFileSync(path.join(dir, file)));
  const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
  const payload = started?.input?.payloads?.[0];
  if (!started?.input || !payload) throw new Error(`${file} has no start input`);
  const input = defaultPayloadConverter.fromPayload<CaseRunInput>(payload);
  started.input.payloads = [defaultPayloadConverter.toPayload({ ...input, revision })];
  return history;
}

const replay = (history: temporal.api.history.v1.History, name: string) =>
  Worker.runReplayHistory({ workflowBundle: { codePath: workflowBundlePath } }, history, name);

describe('case-run replay', () => {
  it('has the recorded histories', () => {
    expect(histories.sort()).toEqual([
      'cancelled.bin',
      'failed.bin',
      'first-attempt-delivered.bin',
      'first-attempt-retried.bin',
      'fused-busy.bin',
      'fused-chain.bin',
      'fused-child.bin',
      'fused-retried.bin',
      'fused-route.bin',
      'fused-task.bin',
      'local-completed.bin',
      'local-failed.bin',
      'marked-delivered.bin',
      'marked-parallel-local.bin',
      'marked-retried.bin',
      'parallel-local.bin',
      'parallel-regular.bin',
      'regular-completed.bin',
      'revision-delivered.bin',
      'revision-parallel-local.bin',
      'revision-retried.bin',
      'route-big.bin',
      'route-small.bin',
      'subflow-cancelled.bin',
      'subflow-child-failed.bin',
      'subflow-completed.bin',
      'tagged-local-completed.bin',
      'tagged-local-failed.bin',
      'tagged-regular-completed.bin',
      'timed-out.bin',
      'turnless-apart.bin',
      'turnless-call-child.bin',
      'turnless-call.bin',
      'turnless-parallel.bin',
      'turnless-route.bin',
      'turnless-task.bin',
      'turns-busy-apart.bin',
      'turns-call-child.bin',
      'turns-call.bin',
      'turns-cancelled.bin',
      'turns-deadline.bin',
      'turns-many.bin',
      'turns-retried-apart.bin',
      'turns-route.bin',
      'turns-task.bin',
    ]);
  });

  it.each(histories.filter((f) => f.startsWith('tagged-')))('%s sets the case status search attribute', (file) => {
    const history = temporal.api.history.v1.History.decode(readFileSync(path.join(dir, file)));
    const upserted = (history.events ?? []).flatMap((e) =>
      Object.keys(e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {}),
    );
    expect(upserted).toContain('CaseflowCaseStatus');
  });

  it.each(histories.filter((f) => f.startsWith('revision-')))('%s holds no patch marker', (file) => {
    const history = temporal.api.history.v1.History.decode(readFileSync(path.join(dir, file)));
    const markers = (history.events ?? []).map((e) => e.markerRecordedEventAttributes?.markerName).filter(Boolean);
    expect(markers.length).toBeGreaterThan(0);
    expect(markers).not.toContain('core_patch');
  });

  it.each(histories.filter((f) => f.startsWith('fused-')))('%s ran its last node and the end as one step', (file) => {
    const history = temporal.api.history.v1.History.decode(readFileSync(path.join(dir, file)));
    const summaries = (history.events ?? []).flatMap((e) => {
      const data = e.markerRecordedEventAttributes ? e.userMetadata?.summary?.data : undefined;
      return data ? [Buffer.from(data).toString()] : [];
    });
    expect(summaries.at(-1)).toMatch(/\(python_code\) and the end of the case"$/);
    expect(summaries).not.toContain('"Record the end of the case"');
  });

  it('parallel-regular.bin scheduled all ten nodes at once, more than the default cap', () => {
    const history = temporal.api.history.v1.History.decode(readFileSync(path.join(dir, 'parallel-regular.bin')));
    // Events after one WorkflowTaskCompleted are that task's commands: the old code scheduled the ten together.
    const perTask: number[] = [];
    for (const e of history.events ?? []) {
      if (e.workflowTaskCompletedEventAttributes) perTask.push(0);
      else if (e.activityTaskScheduledEventAttributes) perTask[perTask.length - 1] = (perTask.at(-1) ?? 0) + 1;
    }
    expect(Math.max(...perTask)).toBe(10);
    expect(defaultMaxParallelNodes).toBeLessThan(10);
  });

  it.each(histories.filter((f) => f !== unreplayable))('replays %s on the current workflow bundle', async (file) => {
    const history = temporal.api.history.v1.History.decode(readFileSync(path.join(dir, file)));
    await expect(
      Worker.runReplayHistory({ workflowBundle: { codePath: workflowBundlePath } }, history, `replay-${file}`),
    ).resolves.toBeUndefined();
  });

  it.each(histories.filter((f) => f.startsWith('marked-')))(
    'replays %s as a run started with revision 4 whose tasks an older worker took (its patch markers matched)',
    async (file) => {
      await expect(replay(startedWithRevision(file, 4), `replay-rev4-${file}`)).resolves.toBeUndefined();
    },
  );

  it(`${unreplayable}: local activities that ended apart, recorded before they took turns, replay on no path`, async () => {
    const history = temporal.api.history.v1.History.decode(readFileSync(path.join(dir, unreplayable)));
    await expect(replay(history, 'replay-apart')).rejects.toThrow(apartError);
  });

  it.each(['turns-busy-apart.bin', 'turns-retried-apart.bin'])(
    '%s would not replay as a run started before outcomes took turns (the old path)',
    async (file) => {
      await expect(replay(startedWithRevision(file, 9), `replay-rev9-${file}`)).rejects.toThrow(apartError);
    },
  );

  it('leaves a run started by newer code (a revision it does not know) to a worker that knows it', async () => {
    const history = startedWithRevision('revision-delivered.bin', caseRunRevision + 1);
    await expect(replay(history, 'replay-newer')).rejects.toThrow(/revision/);
  });

  it('keeps the meaning of recorded revisions: changes are only ever appended', () => {
    // Runs in flight (and the histories above) hold revision 4: its first four changes never move.
    expect(caseRunChanges.slice(0, 4)).toEqual([
      'callback-first-attempt-in-run',
      'case-status-search-attribute',
      'case-node-concurrency-cap',
      'case-end-in-one-local-activity',
    ]);
  });
});
