import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  ContinueAsNew,
  continueAsNew,
  isCancellation,
  proxyActivities,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { RerunBatchActivities } from '../activities/rerun-batches.js';
import type { WorkflowOf } from '../src/temporal/contracts/contract.js';
import {
  rerunBatchProgressQuery,
  rerunBatchStoppedType,
  type RerunBatchInput,
  type rerunBatchContract,
} from '../src/temporal/contracts/rerun-batch.js';

/** A step starts up to perSecond reruns, each bounded by the case start's own timeouts. */
const { rerunBatchStep } = proxyActivities<RerunBatchActivities>({
  summary: 'Rerun the next cases',
  startToCloseTimeout: '5 minutes',
  // An engine or store outage is waited out: the cases a step recorded stay recorded, the rest are done again.
  retry: { initialInterval: '2s', maximumInterval: '1 minute', nonRetryableErrorTypes: [rerunBatchStoppedType] },
});

const { endRerunBatch } = proxyActivities<RerunBatchActivities>({
  summary: 'Record the end of the batch',
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', maximumInterval: '30s', maximumAttempts: 20 },
});

/** The step failure's message when the batch was stopped (its key no longer valid). */
function stoppedReason(err: unknown): string | undefined {
  const cause = err instanceof ActivityFailure ? err.cause : undefined;
  return cause instanceof ApplicationFailure && cause.type === rerunBatchStoppedType ? cause.message : undefined;
}

/**
 * A bulk rerun: steps through the cases the batch matched, newest first,
 * `perSecond` at a time with a second between steps, so reruns start at a
 * bounded rate. Each case's outcome is recorded by the step (once: a retried
 * step skips what is recorded, and a rerun's id derives from the batch and
 * the original, so no original is rerun twice). The cursor lives in the
 * history; a long batch continues as new with it. Cancelling stops between
 * cases; reruns already started go on.
 */
export const rerunBatch: WorkflowOf<typeof rerunBatchContract> = async function rerunBatch(input: RerunBatchInput) {
  let processed = 0;
  let after = input.after;
  setHandler(rerunBatchProgressQuery, () => ({ processed }));
  const end = (status: 'COMPLETED' | 'CANCELLED' | 'FAILED', error?: string) =>
    CancellationScope.nonCancellable(() =>
      endRerunBatch({ batchId: input.batchId, status, ...(error === undefined ? {} : { error }) }),
    );
  try {
    for (;;) {
      const step = await rerunBatchStep({
        batchId: input.batchId,
        limit: input.perSecond,
        ...(after ? { after } : {}),
      });
      processed += step.processed;
      if (step.last === undefined || step.processed < input.perSecond) break;
      after = step.last;
      await sleep(1000);
      if (workflowInfo().continueAsNewSuggested) await continueAsNew<typeof rerunBatch>({ ...input, after });
    }
  } catch (err) {
    if (err instanceof ContinueAsNew) throw err;
    if (isCancellation(err)) {
      await end('CANCELLED');
      throw err;
    }
    const reason = stoppedReason(err);
    await end('FAILED', reason ?? (err instanceof Error ? err.message : String(err)));
    return { status: 'FAILED', processed };
  }
  await end('COMPLETED');
  return { status: 'COMPLETED', processed };
};
