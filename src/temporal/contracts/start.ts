import type { WorkflowClient, WorkflowHandleWithStartDetails, WorkflowStartOptions } from '@temporalio/client';
import type { Workflow } from '@temporalio/common';
import type { WorkflowContract } from './contract.js';

/** Starts a contract's workflow: its options' `args` are checked against the workflow's signature. */
export function startWorkflow<W extends Workflow>(
  client: WorkflowClient,
  contract: WorkflowContract<W>,
  options: WorkflowStartOptions<W>,
): Promise<WorkflowHandleWithStartDetails<W>> {
  return client.start<W>(contract.workflowType, options);
}
