import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { CallbackDeliveryInput } from '../contracts/callback-delivery.js';
import type { TemporalHandle } from '../connection.js';
import { callbackDeliveryContract } from '../contracts/callback-delivery.js';
import { startWorkflow } from '../contracts/start.js';
import { runTags, type RunTags } from '../contracts/search-attributes.js';

/** What the callbacks area needs of delivery workflows in Temporal (CallbackService takes this, tests a fake). */
export interface CallbackDeliveryGateway {
  /** Starts a delivery's retry workflow under `workflowId`; 'conflict' when one with that id ran or is running. */
  start(workflowId: string, input: CallbackDeliveryInput, tags: RunTags): Promise<'started' | 'conflict'>;
}

/** Callback deliveries on the process's Temporal client. */
export class TemporalCallbackDeliveries implements CallbackDeliveryGateway {
  constructor(private readonly temporal: TemporalHandle) {}

  async start(workflowId: string, input: CallbackDeliveryInput, tags: RunTags): Promise<'started' | 'conflict'> {
    try {
      await startWorkflow(this.temporal.client.workflow, callbackDeliveryContract, {
        taskQueue: this.temporal.taskQueue,
        workflowId,
        args: [input],
        // A delivery's workflow runs once: a second start (a retried case end) is a conflict even after it closed.
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        ...runTags(this.temporal.searchAttributes, tags),
      });
      return 'started';
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) return 'conflict';
      throw err;
    }
  }
}
