import { executeChild, startChild, type ChildWorkflowOptions } from '@temporalio/workflow';
import type { Workflow, WithWorkflowArgs } from '@temporalio/common';
import type { WorkflowContract } from '../src/temporal/contracts/contract.js';

/** Starts a contract's workflow as a child: `args` are checked against its signature. */
export function startChildWorkflow<W extends Workflow>(
  contract: WorkflowContract<W>,
  options: WithWorkflowArgs<W, ChildWorkflowOptions>,
): ReturnType<typeof startChild<W>> {
  return startChild<W>(contract.workflowType, options);
}

/** Runs a contract's workflow as a child to its end. */
export function executeChildWorkflow<W extends Workflow>(
  contract: WorkflowContract<W>,
  options: WithWorkflowArgs<W, ChildWorkflowOptions>,
): ReturnType<typeof executeChild<W>> {
  return executeChild<W>(contract.workflowType, options);
}
