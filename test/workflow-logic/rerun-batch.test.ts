import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { CancelledFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EndRerunBatchInput, RerunBatchActivities } from '../../activities/rerun-batches.js';
import {
  rerunBatchContract,
  rerunBatchProgressQuery,
  rerunBatchStoppedType,
  rerunBatchWorkflowId,
  type RerunCursor,
  type RerunStepRequest,
} from '../../src/temporal/contracts/rerun-batch.js';
import type { WorkflowOf } from '../../src/temporal/contracts/contract.js';
import { startWorkflow } from '../../src/temporal/contracts/start.js';
import { hangUntilCancelled, scheduledAt, until, WorkflowLogic } from './support.js';

/** The bulk rerun workflow over its two activities, mocked. */
type Mocks = RerunBatchActivities;
let logic: WorkflowLogic<Mocks>;

beforeAll(async () => {
  logic = await WorkflowLogic.start<Mocks>(['rerunBatchStep', 'endRerunBatch']);
});
afterAll(async () => {
  await logic?.stop();
});

/**
 * What the batch service does with the cases a batch matched, newest first: a step takes the next `limit`
 * after the cursor and records each one's outcome once (a retried step skips what it recorded).
 */
class MatchedCases {
  readonly outcomes = new Map<string, 'started' | 'failed'>();
  /** Each step's request and when the server scheduled it (workflow time). */
  readonly steps: Array<{ request: RerunStepRequest; at: number }> = [];
  readonly ends: EndRerunBatchInput[] = [];
  private readonly cases: RerunCursor[];

  constructor(
    count: number,
    /** The originals whose rerun could not start (recorded failed, the batch goes on). */
    private readonly refusing = new Set<number>(),
  ) {
    const t0 = Date.parse('2026-01-01T00:00:00Z');
    this.cases = Array.from({ length: count }, (_, i) => ({
      createdAt: new Date(t0 - i * 1000).toISOString(),
      id: `case-${i}`,
    }));
  }

  get started(): number {
    return [...this.outcomes.values()].filter((o) => o === 'started').length;
  }

  get failed(): number {
    return [...this.outcomes.values()].filter((o) => o === 'failed').length;
  }

  step(request: RerunStepRequest) {
    this.steps.push({ request, at: scheduledAt() });
    const from = request.after ? this.cases.findIndex((c) => c.id === request.after?.id) + 1 : 0;
    const page = this.cases.slice(from, from + request.limit);
    for (const c of page) {
      if (this.outcomes.has(c.id)) continue;
      this.outcomes.set(c.id, this.refusing.has(this.cases.indexOf(c)) ? 'failed' : 'started');
    }
    const last = page.at(-1);
    return Promise.resolve({ processed: page.length, ...(last ? { last } : {}) });
  }

  end(input: EndRerunBatchInput) {
    this.ends.push(input);
    return Promise.resolve();
  }
}

function runBatch(
  batchId: string,
  perSecond: number,
  mocks: Mocks,
  whileRunning?: (handle: WorkflowHandle<WorkflowOf<typeof rerunBatchContract>>) => Promise<void>,
) {
  return logic.run(
    mocks,
    (client, taskQueue) =>
      startWorkflow(client.workflow, rerunBatchContract, {
        taskQueue,
        workflowId: rerunBatchWorkflowId(batchId),
        args: [{ batchId, perSecond }],
      }),
    whileRunning,
  );
}

describe('rerunBatch', () => {
  it('starts at most perSecond reruns a second, counts every case once, and records COMPLETED', async () => {
    const batchId = randomUUID();
    const matched = new MatchedCases(10, new Set([4]));
    const seen: number[] = [];
    const run = await runBatch(
      batchId,
      3,
      {
        rerunBatchStep: (request) => matched.step(request),
        endRerunBatch: (input) => matched.end(input),
      },
      async (handle) => {
        // Progress is readable while the batch runs.
        await until(() => matched.steps.length >= 2);
        seen.push((await handle.query(rerunBatchProgressQuery)).processed);
      },
    );
    expect(run.result).toEqual({ status: 'COMPLETED', processed: 10 });
    // 10 cases, 3 a step: 4 steps, each a second (workflow time) after the previous one ended.
    expect(matched.steps.map((s) => s.request.limit)).toEqual([3, 3, 3, 3]);
    expect(run.timers).toEqual([1000, 1000, 1000]);
    const gaps = matched.steps.slice(1).map((s, i) => s.at - (matched.steps[i]?.at ?? 0));
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(1000);
    expect(matched.steps.map((s) => s.request.after?.id)).toEqual([undefined, 'case-2', 'case-5', 'case-8']);
    // The case whose rerun could not start counts as failed; the batch went on past it.
    expect([matched.outcomes.size, matched.started, matched.failed]).toEqual([10, 9, 1]);
    expect(seen[0]).toBeGreaterThanOrEqual(3);
    expect(matched.ends).toEqual([{ batchId, status: 'COMPLETED' }]);
  });

  it('retries a step that failed (store or engine away) without counting a case twice', async () => {
    const batchId = randomUUID();
    const matched = new MatchedCases(5);
    let failures = 0;
    const run = await runBatch(batchId, 2, {
      rerunBatchStep: (request) => {
        // The second step fails twice after recording its cases: the retry skips them.
        if (request.after?.id === 'case-1' && failures < 2) {
          failures++;
          return matched.step(request).then(() => Promise.reject(new Error('store unavailable')));
        }
        return matched.step(request);
      },
      endRerunBatch: (input) => matched.end(input),
    });
    expect(run.result).toEqual({ status: 'COMPLETED', processed: 5 });
    expect(matched.steps).toHaveLength(5);
    // The failed step ran three times (Temporal's retries); each case still counted once.
    expect(matched.steps.filter((s) => s.request.after?.id === 'case-1')).toHaveLength(3);
    expect([matched.outcomes.size, matched.started]).toEqual([5, 5]);
    expect(matched.ends).toEqual([{ batchId, status: 'COMPLETED' }]);
  });

  it('stops between cases when cancelled mid-batch and records CANCELLED', async () => {
    const batchId = randomUUID();
    const matched = new MatchedCases(9);
    const run = await runBatch(
      batchId,
      2,
      {
        // The third step is still running when the cancel comes.
        rerunBatchStep: (request) =>
          matched.steps.length === 2
            ? (matched.steps.push({ request, at: 0 }), hangUntilCancelled())
            : matched.step(request),
        endRerunBatch: (input) => matched.end(input),
      },
      async (handle) => {
        await until(() => matched.steps.length === 3);
        await handle.cancel();
      },
    );
    expect(run.err).toBeInstanceOf(WorkflowFailedError);
    expect((run.err as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
    expect(matched.steps).toHaveLength(3);
    expect(matched.started).toBe(4);
    expect(matched.ends).toEqual([{ batchId, status: 'CANCELLED' }]);
  });

  it('ends FAILED with the reason when a step says the batch cannot go on (its key revoked)', async () => {
    const batchId = randomUUID();
    const matched = new MatchedCases(6);
    const reason = 'The key that started the batch can no longer be used: API key revoked';
    const run = await runBatch(batchId, 2, {
      rerunBatchStep: (request) =>
        matched.steps.length === 1
          ? Promise.reject(
              ApplicationFailure.create({ type: rerunBatchStoppedType, message: reason, nonRetryable: true }),
            )
          : matched.step(request),
      endRerunBatch: (input) => matched.end(input),
    });
    expect(run.result).toEqual({ status: 'FAILED', processed: 2 });
    // Not retried: nothing more is started.
    expect(matched.steps).toHaveLength(1);
    expect(matched.started).toBe(2);
    expect(matched.ends).toEqual([{ batchId, status: 'FAILED', error: reason }]);
  });
});
