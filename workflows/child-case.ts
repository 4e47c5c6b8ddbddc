import {
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  ChildWorkflowCancellationType,
  ChildWorkflowFailure,
  ParentClosePolicy,
  TerminatedFailure,
  TimeoutFailure,
  isCancellation,
  proxyLocalActivities,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { ChildCaseActivities } from '../activities/child-cases.js';
import type { ChildCaseStart } from '../src/temporal/contracts/child-case.js';
import type { NodeCompletion } from '../src/domain/case-scheduler.js';
import type { CaseResults, CaseRunInput } from '../src/domain/cases.js';
import type { WorkflowNode } from '../src/domain/graph.js';
import { NodeFailure } from '../src/domain/node-kinds/kind.js';
import {
  caseFailedType,
  caseTimedOutType,
  caseWorkflowId,
  type ChildCaseMemo,
} from '../src/temporal/contracts/case-run.js';
import { runTags, searchAttributes } from '../src/temporal/contracts/search-attributes.js';
import { inTurn, type NodeTurns } from './node-turns.js';
import { startCaseRun } from './start-child.js';

/**
 * A call_workflow node of the case run: a child case with its own row and its own caseRun, started
 * as a Temporal child of this run (so the UI shows the relation, and cancelling this run cancels it).
 */

/** One store write each; retried while the store is away, never past a refusal (that fails the node). */
const { startChildCase, endUnstartedChildCase } = proxyLocalActivities<ChildCaseActivities>({
  summary: 'Sub-workflow: write the child case',
  startToCloseTimeout: '30s',
  retry: { initialInterval: '500ms', maximumInterval: '10s', maximumAttempts: 20 },
});

/** The child's results as the node's outputs: the value of each, by variable_name. */
function outputsOf(results: CaseResults): Record<string, unknown> {
  return Object.fromEntries(Object.entries(results).map(([name, entry]) => [name, entry.value]));
}

/** How a child that did not complete fails the node: its own error, and what became of it. */
function childFailure(err: unknown, childCaseId: string): NodeFailure | undefined {
  if (!(err instanceof ChildWorkflowFailure)) return undefined;
  const { cause } = err;
  const child = `Sub-workflow case ${childCaseId}`;
  const fail = (message: string, kind: string) => new NodeFailure(message, { kind, retryable: false });
  if (cause instanceof CancelledFailure) return fail(`${child} was cancelled`, 'child_cancelled');
  if (cause instanceof TerminatedFailure) return fail(`${child} was terminated`, 'child_terminated');
  // The child's deadline is this case's, so a child timing out is normally this case timing out (see
  // runChildCase); these cover a child whose clock ran ahead of this run's.
  if (cause instanceof TimeoutFailure) return fail(`${child} timed out`, 'child_timed_out');
  if (cause instanceof ApplicationFailure && cause.type === caseTimedOutType)
    return fail(`${child} timed out: ${cause.message}`, 'child_timed_out');
  if (cause instanceof ApplicationFailure && cause.type === caseFailedType)
    return fail(`${child} failed: ${cause.message}`, 'child_failed');
  return fail(`${child} failed: ${cause?.message ?? err.message}`, 'child_failed');
}

/** Where the call stands in its case: the case's deadline (workflow clock), how to show the child on the node, the turns its outcomes take. */
interface ChildCall {
  deadlineAt: number;
  /** Records the child case id on the node (the audit shows it). */
  link: (childCaseId: string) => void;
  /** Absent for runs started before outcomes took turns (see NodeTurns). */
  turns: NodeTurns | undefined;
}

/**
 * Runs the node: writes the child case (its id drawn here, deterministically, so a retried write
 * finds its row), starts its caseRun as a child run with what is left until `deadlineAt` (this case's
 * deadline, on the workflow clock) as its own deadline,
 * and waits for it. The child's results become the node's outputs; a child that fails, times out,
 * is cancelled or terminated fails the node with its error. When this case ends first (cancel,
 * deadline, a failing sibling) the child is cancelled and waited for, and the node counts as
 * cancelled.
 */
export async function runChildCase(
  input: CaseRunInput,
  node: WorkflowNode,
  inputs: Record<string, unknown>,
  { deadlineAt, link, turns }: ChildCall,
): Promise<NodeCompletion> {
  const childCaseId = uuid4();
  const { caseId, organizationId, workspaceId } = input;
  const start = await inTurn(
    turns,
    startChildCase({
      parent: { caseId, organizationId, workspaceId, nodeId: node.id, callDepth: input.callDepth ?? 0 },
      childCaseId,
      process: node.process ?? {},
      inputs,
      remainingMs: deadlineAt - Date.now(),
    }),
  );
  link(childCaseId);
  const child = await startChildRun(input, node, childCaseId, start, turns);
  try {
    const outcome = await child.result();
    const at = new Date().toISOString();
    return {
      outputs: outputsOf(outcome.results),
      logs: [{ level: 'info', message: `Sub-workflow case ${childCaseId} completed`, at }],
    };
  } catch (err) {
    // This case is ending (a cancel, a failing sibling, its deadline): the child was cancelled with it, or
    // reached its own deadline, which is this case's; either way the node is stopped with the case.
    if (CancellationScope.current().consideredCancelled || Date.now() >= deadlineAt)
      throw new CancelledFailure(`Stopped with its case: sub-workflow case ${childCaseId}`);
    throw childFailure(err, childCaseId) ?? err;
  }
}

/**
 * Starts the child's caseRun; when it cannot start (this case ended first, or the start failed)
 * the child's row ends too, so no case stays RUNNING without a run.
 */
async function startChildRun(
  input: CaseRunInput,
  node: WorkflowNode,
  childCaseId: string,
  start: ChildCaseStart,
  turns: NodeTurns | undefined,
) {
  const memo: ChildCaseMemo = { parentCaseId: input.caseId, parentNodeId: node.id };
  // Tagged like the parent only where the namespace has caseflow's attributes (the parent run carries them).
  const tagged = workflowInfo().typedSearchAttributes.get(searchAttributes.organizationId) !== undefined;
  try {
    // The parent's workflow-task timeout is the case one (temporal.caseWorkflowTaskTimeoutMs): it started as a case.
    return await startCaseRun(start.input, workflowInfo().taskTimeoutMs, {
      workflowId: caseWorkflowId(childCaseId),
      parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
      cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
      memo: { ...memo },
      staticSummary: start.summary,
      staticDetails: start.details,
      ...(tagged && start.tags ? runTags(true, start.tags) : {}),
    });
  } catch (err) {
    const cancelled = isCancellation(err);
    const message = cancelled
      ? 'Cancelled before it started: its parent case ended first'
      : `Its run could not start: ${err instanceof Error ? err.message : String(err)}`;
    await CancellationScope.nonCancellable(() =>
      inTurn(turns, endUnstartedChildCase({ childCaseId, status: cancelled ? 'CANCELLED' : 'FAILED', message })),
    );
    throw err;
  }
}
