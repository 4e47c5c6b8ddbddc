import type { CallbackDeliveryInput, CallbackDeliveryResult } from '../../callbacks/delivery.js';
import { workflowContract } from './contract.js';

/** A callback's retries after its first attempt, for hours (workflows/callback-delivery.ts). */
export const callbackDeliveryContract =
  workflowContract<(input: CallbackDeliveryInput) => Promise<CallbackDeliveryResult>>('callbackDelivery');
