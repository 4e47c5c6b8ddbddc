import {
  ActivityFailure,
  CancellationScope,
  isCancellation,
  proxyActivities,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { CallbackActivities } from '../activities/callbacks.js';
import type { callbackDeliveryContract, RetrySchedule } from '../src/temporal/contracts/callback-delivery.js';
import type { WorkflowOf } from '../src/temporal/contracts/contract.js';

const setup = proxyActivities<CallbackActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 10 },
});

/**
 * Delay before attempt `attempt + 1`: exponential from the initial interval,
 * capped, with up to 10% jitter so receivers coming back up are not hit by
 * every pending delivery at once (Math.random is seeded, hence replay-safe).
 */
function backoff(schedule: RetrySchedule, attempt: number): number {
  const base = Math.min(
    schedule.initialIntervalMs * schedule.backoffCoefficient ** (attempt - 1),
    schedule.maximumIntervalMs,
  );
  return Math.round(base * (1 - Math.random() * 0.1));
}

/**
 * Delivers one case completion callback: the first attempt at once (or, when
 * the case run already made it, after the first backoff), then retries with
 * exponential backoff until a 2xx, a final answer (410), or the schedule's
 * total time runs out. Each attempt is its own activity so every
 * one is recorded, whatever happened. Started by the case run as an abandoned
 * child, so it never delays or changes the case's own status.
 */
export const callbackDelivery: WorkflowOf<typeof callbackDeliveryContract> = async function callbackDelivery(input) {
  const { workflowId, startTime } = workflowInfo();
  const { attemptsMade = 0, ...delivery } = input;
  const schedule = await setup.openCallbackDelivery({ ...delivery, workflowId });
  const { deliverCallback } = proxyActivities<CallbackActivities>({
    // The HTTP timeout plus room for signing and recording.
    startToCloseTimeout: schedule.timeoutMs + 30_000,
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 10 },
  });
  const deadline = startTime.getTime() + schedule.maxElapsedMs;

  let attempt = attemptsMade;
  try {
    if (attempt > 0) await sleep(backoff(schedule, attempt));
    for (;;) {
      attempt += 1;
      const delay = backoff(schedule, attempt);
      const retryInMs = Date.now() + delay <= deadline ? delay : null;
      const result = await deliverCallback({ deliveryId: input.deliveryId, attempt, retryInMs }).catch(
        (err: unknown) => {
          // The store stayed unreachable through the activity's own retries: treat it as a failed attempt, keep to the schedule.
          if (err instanceof ActivityFailure && !isCancellation(err))
            return { outcome: retryInMs === null ? ('failed' as const) : ('retry' as const) };
          throw err;
        },
      );
      if (result.outcome === 'delivered')
        return { deliveryId: input.deliveryId, status: 'delivered', attempts: attempt };
      if (result.outcome === 'failed' || retryInMs === null) {
        await setup.finishCallbackDelivery({ deliveryId: input.deliveryId, status: 'failed' });
        return { deliveryId: input.deliveryId, status: 'failed', attempts: attempt };
      }
      await sleep(retryInMs);
    }
  } catch (err) {
    if (isCancellation(err)) {
      await CancellationScope.nonCancellable(() =>
        setup.finishCallbackDelivery({ deliveryId: input.deliveryId, status: 'failed' }),
      );
    }
    throw err;
  }
};
