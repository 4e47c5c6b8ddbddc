import type { AttemptInput, AttemptResult, FirstAttemptResult, OpenDeliveryInput } from '../src/callbacks/delivery.js';
import type { RetrySchedule } from '../src/temporal/contracts/callback-delivery.js';
import type { DeliveryStatus } from '../src/domain/callback-records.js';
import type { ActivityDeps } from './deps.js';

/** Activities that deliver case completion callbacks; the rules live in the callback service. */
export function createCallbackActivities({ services }: ActivityDeps) {
  const { callbacks } = services;
  return {
    openCallbackDelivery(input: OpenDeliveryInput): Promise<RetrySchedule> {
      return callbacks.openDelivery(input);
    },
    firstCallbackAttempt(input: OpenDeliveryInput): Promise<FirstAttemptResult> {
      return callbacks.firstAttempt(input);
    },
    deliverCallback(input: AttemptInput): Promise<AttemptResult> {
      return callbacks.deliverAttempt(input);
    },
    finishCallbackDelivery(input: { deliveryId: string; status: DeliveryStatus }): Promise<void> {
      return callbacks.finishDelivery(input.deliveryId, input.status);
    },
  };
}

export type CallbackActivities = ReturnType<typeof createCallbackActivities>;
