import {
  defineSearchAttributeKey,
  SearchAttributeType,
  WorkflowExecutionAlreadyStartedError,
} from '@temporalio/common';
import { ChildWorkflowFailure, isCancellation, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { ScheduleActivities } from '../activities/schedules.js';
import { caseWorkflowId } from '../src/temporal/contracts/case-run.js';
import type { WorkflowOf } from '../src/temporal/contracts/contract.js';
import type { scheduledCaseContract } from '../src/temporal/contracts/scheduled-case.js';
import { startCaseRun } from './start-child.js';

const { openScheduledFiring, linkScheduledCase } = proxyActivities<ScheduleActivities>({
  startToCloseTimeout: '1 minute',
  // The store may be away for a while: keep trying, a firing is never dropped silently.
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/** Set by Temporal on every workflow a schedule starts. */
const scheduledStartTime = defineSearchAttributeKey('TemporalScheduledStartTime', SearchAttributeType.DATETIME);

/**
 * One firing of a schedule: the case is created as the API would create it
 * (or the firing is recorded as failed, with why), then its run is this
 * workflow's child, so cancelling the firing (overlap: cancel_previous)
 * cancels the case, and the firing runs as long as its case.
 */
export const scheduledCase: WorkflowOf<typeof scheduledCaseContract> = async function scheduledCase(input) {
  const info = workflowInfo();
  const scheduledAt = info.typedSearchAttributes.get(scheduledStartTime) ?? info.startTime;
  const opened = await openScheduledFiring({
    scheduleId: input.scheduleId,
    firingWorkflowId: info.workflowId,
    scheduledAt: scheduledAt.toISOString(),
  });
  if (opened.firing !== 'started') return opened;
  const { run, labels } = opened;
  let child;
  try {
    child = await startCaseRun(run, opened.workflowTaskTimeoutMs, {
      workflowId: caseWorkflowId(run.caseId),
      staticSummary: labels.summary,
      staticDetails: labels.details,
      typedSearchAttributes: labels.searchAttributes,
    });
  } catch (err) {
    // The case's run was started by the recovery loop after a crash here: the case runs, only not as our child.
    if (err instanceof WorkflowExecutionAlreadyStartedError)
      return { firing: 'started', caseId: run.caseId, status: 'RUNNING' };
    throw err;
  }
  await linkScheduledCase({ caseId: run.caseId, runId: child.firstExecutionRunId });
  try {
    const outcome = await child.result();
    return { firing: 'started', caseId: run.caseId, status: outcome.status };
  } catch (err) {
    // A failed case is a firing that ran: the case records why. A cancelled firing cancels its case and ends cancelled.
    if (err instanceof ChildWorkflowFailure && !isCancellation(err)) {
      return { firing: 'started', caseId: run.caseId, status: 'FAILED' };
    }
    throw err;
  }
};
