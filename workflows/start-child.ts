import { startChild, type ChildWorkflowHandle, type ChildWorkflowOptions } from '@temporalio/workflow';
import type { Workflow, WithWorkflowArgs } from '@temporalio/common';
import { caseRunRevision } from '../src/domain/case-run-changes.js';
import type { CaseRunInput } from '../src/domain/cases.js';
import { caseRunContract } from '../src/temporal/contracts/case-run.js';
import type { WorkflowContract, WorkflowOf } from '../src/temporal/contracts/contract.js';

/** Starts a contract's workflow as a child: `args` are checked against its signature. */
export function startChildWorkflow<W extends Workflow>(
  contract: WorkflowContract<W>,
  options: WithWorkflowArgs<W, ChildWorkflowOptions>,
): ReturnType<typeof startChild<W>> {
  return startChild<W>(contract.workflowType, options);
}

/**
 * Starts a case run as a child of this workflow the way the API starts one (src/temporal/gateways/case-runs.ts):
 * - with a revision: an input built by the store's side (CaseStarts.runInput) carries its own, one built in workflow
 *   code (the generation dry run) takes this code's, so the run asks no patch marker for the changes it knows;
 * - with the case workflow-task timeout (temporal.caseWorkflowTaskTimeoutMs), not Temporal's 10 s: a case's first
 *   task runs its local activities, and past the timeout they run again (performance.md, overload). Undefined only
 *   for a parent started before it carried the setting, which then keeps Temporal's default.
 * Both are in the start command's attributes, not commands of their own: histories replay the same either way.
 */
export function startCaseRun(
  run: CaseRunInput,
  workflowTaskTimeoutMs: number | undefined,
  options: Omit<ChildWorkflowOptions, 'args' | 'workflowTaskTimeout'>,
): Promise<ChildWorkflowHandle<WorkflowOf<typeof caseRunContract>>> {
  return startChildWorkflow(caseRunContract, {
    ...options,
    args: [{ ...run, revision: run.revision ?? caseRunRevision }],
    ...(workflowTaskTimeoutMs === undefined ? {} : { workflowTaskTimeout: workflowTaskTimeoutMs }),
  });
}
