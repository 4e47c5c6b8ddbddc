import type { CaseScheduler, NodeCompletion } from './case-scheduler.js';
import type { CaseRunInput, TerminalStatus } from './cases.js';
import type { WorkflowNode } from './graph.js';
import type { InlineNodeKind, NodeRunResult } from './node-kinds/kind.js';
import { nodeKinds } from './node-kinds/registry.js';

/**
 * The fused last node's room for the end after the node itself: the final write and the callback's first attempt
 * (bounded by callbacks.timeoutMs), as the end has on its own (endCase's start-to-close).
 */
export const lastNodeEndBudgetMs = 120_000;

/** What the end after the last node needs of the run, besides the scheduler. */
export type LastNodeCase = Pick<CaseRunInput, 'caseId' | 'organizationId' | 'workspaceId' | 'inputs' | 'deadlineMs'>;

/** An inline node's evaluation in a case (its one attempt): the workflow's and the fused end's. */
export function evaluateInline(
  kind: InlineNodeKind,
  run: Pick<CaseRunInput, 'caseId' | 'organizationId' | 'workspaceId' | 'inputs'>,
  node: WorkflowNode,
  inputs: Record<string, unknown>,
): NodeRunResult {
  const { caseId, organizationId, workspaceId } = run;
  return kind.evaluate({
    caseId,
    organizationId,
    workspaceId,
    node,
    process: node.process ?? {},
    inputs,
    caseInputs: run.inputs,
    attempt: 1,
  });
}

/**
 * The case's last activity node completed (`CaseScheduler.lastNodeTail` said it was): its output nodes evaluated and
 * the case finished, at `at` (the workflow's clock when the node was called). The fused activity runs this on the
 * scheduler resumed from the tail to write the end; the workflow runs it on its own scheduler with the same
 * completion and `at`, so both hold the same end without the activity sending it back through history.
 */
export function endAfterLastNode(
  scheduler: CaseScheduler,
  run: LastNodeCase,
  id: string,
  completion: NodeCompletion,
  at: string,
): TerminalStatus {
  scheduler.complete(id, completion);
  for (const out of scheduler.settle(id, at)) {
    const node = scheduler.node(out);
    const kind = nodeKinds.of(node);
    // lastNodeTail hands out output nodes only; anything else would be a bug, never a silent skip.
    if (kind?.runs !== 'inline') throw new Error(`node ${out} after the last node does not run inline`);
    scheduler.begin(out, at);
    const result = evaluateInline(kind, run, node, scheduler.inputsOf(out));
    scheduler.attempt(out, 1);
    scheduler.complete(out, result);
    scheduler.settle(out, at);
  }
  return scheduler.finish({ deadlinePassed: false, cancelled: false, deadlineMs: run.deadlineMs });
}
