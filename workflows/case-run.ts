import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  ParentClosePolicy,
  TimeoutFailure,
  defineQuery,
  isCancellation,
  log,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type { CaseActivities, NodeFailureDetails, RunNodeRequest, RunNodeResponse } from '../activities/cases.js';
import { outputResults, pureNodeHandlers } from '../activities/node-handlers/pure.js';
import { NodeFailure, type NodeRunResult } from '../activities/node-handlers/types.js';
import { edgeTaken, indexGraph, isInputNode, resolveNodeInputs } from '../src/domain/case-graph.js';
import {
  caseProgressQueryName,
  defaultNodeTimeoutMs,
  localActivityMaxMs,
  type CaseError,
  type CaseProgress,
  type CaseResults,
  type CaseRunInput,
  type NodeError,
  type NodeRecord,
  type TerminalStatus,
} from '../src/domain/cases.js';
import type { WorkflowNode } from '../src/domain/graph.js';

export const caseProgressQuery = defineQuery<CaseProgress>(caseProgressQueryName);

export interface CaseRunOutcome {
  status: TerminalStatus;
  results: CaseResults;
}

/** Slack on top of a node's own limit (the Python pool enforces the limit itself; this covers queueing). */
const ACTIVITY_GRACE_MS = 10_000;

const { finalizeCase } = proxyLocalActivities<CaseActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '500ms', maximumInterval: '10s', maximumAttempts: 20 },
});

/**
 * Local activity for short nodes (no task round trip, one marker event),
 * regular activity for long ones. Each call is one attempt: the workflow
 * retries itself (see runWithRetries) so the audit knows the attempt count.
 */
function nodeActivity(node: WorkflowNode): CaseActivities['runNode'] {
  const timeoutMs = node.execution?.timeout_ms ?? defaultNodeTimeoutMs;
  const options = { startToCloseTimeout: timeoutMs + ACTIVITY_GRACE_MS, retry: { maximumAttempts: 1 } };
  return timeoutMs <= localActivityMaxMs ? proxyLocalActivities<CaseActivities>(options).runNode : proxyActivities<CaseActivities>(options).runNode;
}

/**
 * The ApplicationFailure a node activity threw. A regular activity's comes
 * wrapped in an ActivityFailure; a local activity's arrives unwrapped (seen
 * with SDK 1.24), so both shapes are read.
 */
function nodeApplicationFailure(err: unknown): ApplicationFailure | undefined {
  if (err instanceof ApplicationFailure) return err;
  if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure) return err.cause;
  return undefined;
}

/** Up to `execution.max_attempts` attempts (default 1), backing off 1 s, 2 s, 4 s … (at most 1 min) between them. */
async function runWithRetries(node: WorkflowNode, request: RunNodeRequest, onAttempt: (attempt: number) => void): Promise<RunNodeResponse> {
  const maxAttempts = node.execution?.max_attempts ?? 1;
  const run = nodeActivity(node);
  for (let attempt = 1; ; attempt++) {
    onAttempt(attempt);
    try {
      return await run({ ...request, attempt });
    } catch (err) {
      const final = nodeApplicationFailure(err)?.nonRetryable === true;
      if (isCancellation(err) || final || attempt >= maxAttempts) throw err;
      await sleep(Math.min(1000 * 2 ** (attempt - 1), 60_000));
    }
  }
}

function failureOf(err: unknown, node: WorkflowNode): { error: NodeError; details?: NodeFailureDetails } {
  const application = nodeApplicationFailure(err);
  if (application) {
    const details = application.details?.[0] as NodeFailureDetails | undefined;
    return { error: details?.error ?? { message: application.message, kind: 'error' }, details };
  }
  if (err instanceof ActivityFailure) {
    const cause = err.cause;
    if (cause instanceof TimeoutFailure) {
      return { error: { message: `Node ${node.name} timed out (${node.execution?.timeout_ms ?? defaultNodeTimeoutMs} ms per attempt)`, kind: 'timeout' } };
    }
    return { error: { message: cause?.message ?? err.message, kind: 'error' } };
  }
  if (err instanceof NodeFailure) return { error: { message: err.message, kind: err.kind } };
  return { error: { message: err instanceof Error ? err.message : String(err), kind: 'handler' } };
}

/**
 * One case: interprets the workflow graph from its input node. Nodes run as
 * soon as every parent has finished or been skipped; independent branches
 * run in parallel; a route's bool output picks its edges (or their
 * complement) and nodes left with no taken incoming edge are skipped. Pure
 * handlers (input, output, condition) run inline; others run as activities.
 * The case deadline is a timer here; cancellation comes from Temporal. The
 * end (status, results, node audit) is written by one activity, outside
 * cancellation, and the callback child is started when a URL was given.
 */
export async function caseRun(input: CaseRunInput): Promise<CaseRunOutcome> {
  const { graph } = input;
  const index = indexGraph(graph);
  const now = () => new Date().toISOString();
  const startedAt = Date.now();
  const state: CaseProgress = { caseId: input.caseId, status: 'RUNNING', nodes: {}, executed: [], failed: [], running: [], remaining: [], results: {} };
  for (const node of Object.values(graph.nodes)) {
    state.nodes[node.id] = { nodeId: node.id, name: node.name, handlerClass: node.handler_class ?? node.type, status: 'pending', logs: [], attempts: 0 };
  }
  const remaining = () => index.order.filter((id) => state.nodes[id]?.status === 'pending');
  setHandler(caseProgressQuery, () => ({ ...state, remaining: remaining() }));

  const outputs = new Map<string, Record<string, unknown>>();
  const launched = new Set<string>();
  const tasks: Promise<void>[] = [];
  let failure: CaseError | undefined;
  let deadlinePassed = false;
  const graphScope = new CancellationScope();
  const deadlineScope = new CancellationScope();

  const record = (id: string): NodeRecord => state.nodes[id] as NodeRecord;

  /** Called when a node completed or was skipped: its children whose parents are all settled run or are skipped. */
  const settle = (id: string): void => {
    for (const edge of index.outgoing.get(id) ?? []) {
      const target = edge.to_node_id;
      if (launched.has(target)) continue;
      const incoming = index.incoming.get(target) ?? [];
      const settled = incoming.every((e) => ['completed', 'skipped'].includes(record(e.from_node_id).status));
      if (!settled) continue;
      launched.add(target);
      const taken = incoming.some((e) => {
        const from = graph.nodes[e.from_node_id];
        return record(e.from_node_id).status === 'completed' && from !== undefined && edgeTaken(e, from, outputs.get(e.from_node_id) ?? {});
      });
      if (taken) tasks.push(execute(target));
      else skip(target);
    }
  };

  const skip = (id: string): void => {
    const rec = record(id);
    rec.status = 'skipped';
    settle(id);
  };

  const execute = async (id: string): Promise<void> => {
    const node = graph.nodes[id] as WorkflowNode;
    const rec = record(id);
    // Nothing new starts once the case is ending (failure elsewhere, cancel, deadline).
    if (graphScope.consideredCancelled) return;
    rec.status = 'running';
    rec.startedAt = now();
    state.running.push(id);
    try {
      const inputs = isInputNode(node) ? input.inputs : resolveNodeInputs(index, node, outputs);
      rec.inputs = inputs;
      const pure = Object.hasOwn(pureNodeHandlers, rec.handlerClass) ? pureNodeHandlers[rec.handlerClass] : undefined;
      let result: NodeRunResult;
      if (pure) {
        result = await pure.run({ caseId: input.caseId, organizationId: input.organizationId, workspaceId: input.workspaceId, node, inputs, caseInputs: input.inputs, attempt: 1 });
        rec.attempts = 1;
      } else {
        const request = { caseId: input.caseId, organizationId: input.organizationId, workspaceId: input.workspaceId, node, inputs, attempt: 1 };
        const response = await runWithRetries(node, request, (attempt) => {
          rec.attempts = attempt;
        });
        rec.startedAt = response.startedAt;
        rec.finishedAt = response.finishedAt;
        result = response;
      }
      rec.outputs = result.outputs;
      rec.logs = result.logs;
      rec.status = 'completed';
      outputs.set(id, result.outputs);
      if (rec.handlerClass === 'output') Object.assign(state.results, outputResults(node, result.outputs));
      state.executed.push(id);
    } catch (err) {
      if (isCancellation(err)) {
        rec.status = 'cancelled';
        rec.error = { message: 'Stopped: the case ended while the node ran', kind: 'cancelled' };
      } else {
        const { error, details } = failureOf(err, node);
        rec.status = 'failed';
        rec.error = error;
        if (details) {
          rec.logs = details.logs;
          rec.startedAt = details.startedAt;
          rec.finishedAt = details.finishedAt;
        }
        state.executed.push(id);
        state.failed.push(id);
        if (!failure) {
          failure = { message: `Node ${node.name} failed: ${error.message}`, nodeId: id };
          graphScope.cancel();
        }
      }
    } finally {
      rec.finishedAt ??= now();
      state.running = state.running.filter((r) => r !== id);
    }
    // A local activity holds the workflow task, so the deadline timer may not have fired yet: check the clock too.
    if (Date.now() - startedAt >= input.deadlineMs && !deadlinePassed) {
      deadlinePassed = true;
      graphScope.cancel();
    }
    if (rec.status === 'completed') settle(id);
  };

  void deadlineScope.run(() => sleep(input.deadlineMs)).then(
    () => {
      deadlinePassed = true;
      graphScope.cancel();
    },
    // The timer is cancelled when the case ends first, or by a cancel request.
    () => undefined,
  );

  await graphScope.run(async () => {
    const entries = Object.values(graph.nodes).filter(isInputNode);
    if (entries.length === 0) {
      failure = { message: 'The workflow has no input node' };
      return;
    }
    for (const node of entries) {
      launched.add(node.id);
      tasks.push(execute(node.id));
    }
    // A node no edge leads to (other than the input) can never run.
    for (const id of index.order) {
      if (!launched.has(id) && (index.incoming.get(id) ?? []).length === 0) {
        launched.add(id);
        skip(id);
      }
    }
    for (let settledCount = 0; settledCount < tasks.length; ) {
      const batch = tasks.length;
      await Promise.all(tasks.slice(settledCount));
      settledCount = batch;
    }
  });
  deadlineScope.cancel();

  const stuck = remaining();
  let status: TerminalStatus;
  if (failure) status = 'FAILED';
  else if (deadlinePassed) status = 'TIMED_OUT';
  else if (graphScope.consideredCancelled) status = 'CANCELLED';
  else if (stuck.length > 0) {
    status = 'FAILED';
    failure = { message: `Nodes ${stuck.join(', ')} can never run: the graph has a cycle` };
  } else status = 'COMPLETED';
  for (const id of stuck) record(id).status = 'not_executed';
  state.status = status;
  if (status === 'FAILED') state.error = failure;
  else if (status === 'TIMED_OUT') state.error = { message: `The case did not finish within its deadline of ${input.deadlineMs} ms` };
  else if (status === 'CANCELLED') state.error = { message: 'The case was cancelled' };

  await CancellationScope.nonCancellable(async () => {
    const final: CaseProgress = { ...state, remaining: [] };
    await finalizeCase({ caseId: input.caseId, status, runId: workflowInfo().runId, progress: final });
    if (input.callbackUrl) {
      try {
        await startChild('callbackDelivery', {
          workflowId: `callback-${input.caseId}`,
          args: [
            {
              deliveryId: `${input.caseId}-${status}`,
              caseId: input.caseId,
              workspaceId: input.workspaceId,
              callbackUrl: input.callbackUrl,
              body: { caseId: input.caseId, status, results: state.results, ...(state.error ? { error: state.error } : {}) },
            },
          ],
          parentClosePolicy: ParentClosePolicy.ABANDON,
        });
      } catch (err) {
        // The case outcome is recorded already; a callback that cannot start must not change it.
        log.error('callback delivery could not start', { caseId: input.caseId, error: err instanceof Error ? err.message : String(err) });
      }
    }
  });

  // The Temporal run ends the way the case did, so the Web UI tells the same story.
  if (status === 'CANCELLED') throw new CancelledFailure('The case was cancelled');
  if (status === 'FAILED') throw ApplicationFailure.nonRetryable(state.error?.message ?? 'The case failed', 'CaseFailed');
  if (status === 'TIMED_OUT') throw ApplicationFailure.nonRetryable(state.error?.message ?? 'The case timed out', 'CaseTimedOut');
  return { status, results: state.results };
}
