import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import type { CallbackDeliveryInput } from '../contracts/callback-delivery.js';
import type { TemporalHandle } from '../connection.js';
import { callbackDeliveryContract } from '../contracts/callback-delivery.js';
import { startWorkflow } from '../contracts/start.js';
import { runTags, type RunTags } from '../contracts/search-attributes.js';
import { within } from '../engine-health.js';

/** A describe is bounded: one that never answers would otherwise hold up every later pass of the delivery sweep. */
const DESCRIBE_TIMEOUT_MS = 15_000;

/** What the callbacks area needs of delivery workflows in Temporal (CallbackService takes this, tests a fake). */
export interface CallbackDeliveryGateway {
  /** Starts a delivery's retry workflow under `workflowId`; 'conflict' when one with that id ran or is running. */
  start(workflowId: string, input: CallbackDeliveryInput, tags: RunTags): Promise<'started' | 'conflict'>;
  /** Whether the workflow under `workflowId` ran and closed; false while it runs, or when Temporal has none. */
  closed(workflowId: string): Promise<boolean>;
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

  async closed(workflowId: string): Promise<boolean> {
    try {
      const { client } = this.temporal;
      const describe = client.withDeadline(Date.now() + DESCRIBE_TIMEOUT_MS, () =>
        client.workflow.getHandle(workflowId).describe(),
      );
      return (await within(DESCRIBE_TIMEOUT_MS, 'describing a delivery workflow', describe)).status.name !== 'RUNNING';
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return false;
      throw err;
    }
  }
}
