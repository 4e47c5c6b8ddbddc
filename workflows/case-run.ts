import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  ParentClosePolicy,
  TimeoutFailure,
  isCancellation,
  log,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { CallbackActivities } from '../activities/callbacks.js';
import type {
  CaseActivities,
  EndCaseResult,
  LastNodeResult,
  NodeFailureDetails,
  RunNodeRequest,
} from '../activities/cases.js';
import { caseRunRevision, knownAtStart, type CaseRunChange } from '../src/domain/case-run-changes.js';
import { CaseScheduler, type LastNodeTail, type NodeCompletion, type RunEnding } from '../src/domain/case-scheduler.js';
import {
  defaultMaxParallelNodes,
  localActivityMaxMs,
  nodeFailedType,
  type CaseProgress,
  type CaseRunInput,
  type NodeError,
  type RecordedEnd,
  type TerminalStatus,
} from '../src/domain/cases.js';
import { endAfterLastNode, evaluateInline, lastNodeEndBudgetMs } from '../src/domain/last-node.js';
import type { WorkflowNode } from '../src/domain/graph.js';
import {
  busyFailureKind,
  isWaitingKind,
  NodeFailure,
  nodeExecution,
  type InlineNodeKind,
} from '../src/domain/node-kinds/kind.js';
import { nodeKinds } from '../src/domain/node-kinds/registry.js';
import { NodeSlots } from '../src/domain/node-slots.js';
import { handlerClassName } from '../src/domain/vocabulary.js';
import { searchAttributes } from '../src/temporal/contracts/search-attributes.js';
import {
  callbackDeliveryContract,
  caseCallbackDelivery,
  caseCallbackWorkflowId,
  type CallbackDeliveryInput,
} from '../src/temporal/contracts/callback-delivery.js';
import {
  caseFailedType,
  caseProgressQuery,
  caseTimedOutType,
  type CaseFailureDetails,
  type caseRunContract,
} from '../src/temporal/contracts/case-run.js';
import type { WorkflowOf } from '../src/temporal/contracts/contract.js';
import { activeDeadline, PersonWaits } from './human-tasks.js';
import { runChildCase } from './child-case.js';
import { inTurn, NodeTurns } from './node-turns.js';
import { startChildWorkflow } from './start-child.js';

/**
 * Whether a change to the run's commands applies to this run: known to the
 * code that started it (its recorded revision; no marker), or else what its
 * history says (a patch marker, as runs started before the revision ask).
 * In a rolling deploy a worker of older code may have taken tasks of a run
 * with a revision and written the markers; replaying, the call to
 * `patched()` matches such a marker (and, with none, records nothing).
 */
function changeInForce(input: CaseRunInput, change: CaseRunChange): boolean {
  if (!knownAtStart(input.revision, change)) return patched(change);
  if (workflowInfo().unsafe.isReplaying) patched(change);
  return true;
}

/**
 * A run started by newer code may need changes this code does not have:
 * its task fails (a plain Error fails the task, not the run) and Temporal
 * hands it again, until a worker that knows the revision takes it.
 */
function refuseNewerRevision(input: CaseRunInput): void {
  if ((input.revision ?? 0) > caseRunRevision)
    throw new Error(
      `case run started with revision ${String(input.revision)}; this worker knows ${String(caseRunRevision)}: left to an up-to-date worker`,
    );
}

/** Slack on top of a node's own limit (the Python pool enforces the limit itself; this covers queueing). */
const ACTIVITY_GRACE_MS = 10_000;
/** The longest wait a node's Retry-After may impose between two attempts (the case deadline bounds it too). */
const MAX_RETRY_AFTER_MS = 5 * 60_000;
/** The longest wait between two tries of a node its runner turned away as busy. */
const MAX_BUSY_WAIT_MS = 30_000;

const { finalizeCase } = proxyLocalActivities<CaseActivities>({
  summary: 'Record the end of the case',
  startToCloseTimeout: '30s',
  retry: { initialInterval: '500ms', maximumInterval: '10s', maximumAttempts: 20 },
});

/** One store read of the case's end (the fused last node's failures ask it); retried while the store is away. */
const { caseEnd } = proxyLocalActivities<CaseActivities>({
  summary: 'Read the end of the case',
  startToCloseTimeout: '30s',
  retry: { initialInterval: '500ms', maximumInterval: '10s', maximumAttempts: 20 },
});

/** One store read of the creator's key; retried while the store is away. */
const { checkCreator } = proxyLocalActivities<CaseActivities>({
  summary: 'Check the key that created the case',
  startToCloseTimeout: '30s',
  retry: { initialInterval: '500ms', maximumInterval: '10s', maximumAttempts: 20 },
});

/**
 * Why this run may not start, for a run that begins after the request that asked for it (a delayed
 * start, a case admitted from its queue): the key that created the case was revoked or expired, its
 * user left, or it lost Case: Full in the workspace. A check that cannot be made refuses too, so
 * nothing runs for a key nobody vouched for. Not cancellable: it is one short read, and a cancel
 * arriving meanwhile still ends the case CANCELLED (the graph's scope starts cancelled).
 */
async function creatorRefusal(input: CaseRunInput): Promise<string | undefined> {
  const keyId = input.creatorKeyId;
  if (keyId === undefined || !changeInForce(input, 'creator-key-recheck')) return undefined;
  const { caseId, organizationId, workspaceId } = input;
  try {
    const refusal = await CancellationScope.nonCancellable(() =>
      checkCreator({ caseId, organizationId, workspaceId, keyId }),
    );
    return refusal ?? undefined;
  } catch (err) {
    const cause = err instanceof ActivityFailure && err.cause ? err.cause : err;
    return `The API key that created case ${caseId} could not be checked: ${cause instanceof Error ? cause.message : String(cause)}`;
  }
}

/** The first callback attempt, inside the run: one HTTP call bounded by callbacks.timeoutMs, never retried here. */
const { firstCallbackAttempt } = proxyLocalActivities<CallbackActivities>({
  summary: 'Callback: first attempt',
  startToCloseTimeout: '2 minutes',
  retry: { maximumAttempts: 1 },
});

/**
 * The final write and the callback's first attempt in one local activity.
 * Retried like finalizeCase (only a failed write throws), with room for the
 * attempt's HTTP call (bounded by callbacks.timeoutMs).
 */
const endCaseOptions = {
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '500ms', maximumInterval: '10s', maximumAttempts: 20 },
} as const;
// One activity; two summaries, so the Temporal UI says whether this run calls back.
const { endCase } = proxyLocalActivities<CaseActivities>({ ...endCaseOptions, summary: 'Record the end of the case' });
const { endCase: endCaseAndCallBack } = proxyLocalActivities<CaseActivities>({
  ...endCaseOptions,
  summary: 'Record the end of the case and call back',
});

/**
 * Local activity for short nodes (no task round trip, one marker event),
 * regular activity for long ones. Each call is one attempt: the workflow
 * retries itself (see runWithRetries) so the audit knows the attempt count.
 * The summary names the node, so the Temporal UI's timeline reads like the
 * workflow rather than a row of `runNode`. A local activity's outcome takes
 * its turn (NodeTurns): only those come grouped differently on replay.
 */
function nodeActivity(node: WorkflowNode, turns: NodeTurns | undefined): CaseActivities['runNode'] {
  const { timeoutMs } = nodeExecution(node, nodeKinds.of(node));
  const options = {
    startToCloseTimeout: timeoutMs + ACTIVITY_GRACE_MS,
    retry: { maximumAttempts: 1 },
    summary: `${node.name} (${handlerClassName(node)})`,
  };
  if (timeoutMs > localActivityMaxMs) return proxyActivities<CaseActivities>(options).runNode;
  const { runNode } = proxyLocalActivities<CaseActivities>(options);
  return (request) => inTurn(turns, runNode(request));
}

/** How the case ended when its last node and the end ran as one step: written by it, or the store's. */
type EndedInGraph = { status: TerminalStatus; attempt: EndCaseResult } | { store: RecordedEnd };

/**
 * The node and the case's end in one local activity (one round trip, one marker), when the scheduler says it is the
 * last activity node (`lastNodeTail`) and it is a local activity's length. Each call is one attempt, as nodeActivity's.
 * Called outside cancellation: an end the activity commits is the case's end, so a cancel or the deadline timer
 * arriving meanwhile waits for it (the node's own limit bounds the wait) instead of abandoning an activity that may
 * still write COMPLETED, and no cancellation ever comes back from it (which would leave the node `cancelled` and its
 * output nodes pending: a "cycle" at the end). A failure that is not the node's own (a timeout, an activity the
 * worker stopped) asks the store whether an earlier call wrote the end before the node runs again.
 */
function lastNodeActivity(
  input: CaseRunInput,
  node: WorkflowNode,
  tail: LastNodeTail,
  deadlineAt: number,
  turns: NodeTurns | undefined,
): { run: (request: RunNodeRequest) => Promise<LastNodeResult>; calledAt: () => number } {
  const { timeoutMs } = nodeExecution(node, nodeKinds.of(node));
  const { runLastNode } = proxyLocalActivities<CaseActivities>({
    startToCloseTimeout: timeoutMs + ACTIVITY_GRACE_MS + lastNodeEndBudgetMs,
    retry: { maximumAttempts: 1 },
    summary: `${node.name} (${handlerClassName(node)}) and the end of the case`,
  });
  const { runId, workflowId } = workflowInfo();
  const run = {
    runId,
    workflowId,
    caseInputs: input.inputs,
    deadlineMs: input.deadlineMs,
    ...(input.callbackUrl ? { callbackUrl: input.callbackUrl } : {}),
  };
  let now = Date.now();
  return {
    calledAt: () => now,
    run: async (request) => {
      now = Date.now();
      try {
        return await CancellationScope.nonCancellable(() =>
          inTurn(turns, runLastNode({ node: request, tail, run, now, deadlineAt })),
        );
      } catch (err) {
        if (nodeApplicationFailure(err)?.type === nodeFailedType) throw err;
        const end = await CancellationScope.nonCancellable(() => caseEnd(input.caseId));
        if (end) return { ended: 'before', end };
        throw err;
      }
    },
  };
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

/** What runWithRetries tells the scheduler: each attempt as it starts, and what a retried attempt reported. */
interface AttemptHooks {
  started(attempt: number): void;
  retrying(details: NodeFailureDetails | undefined): void;
}

/**
 * Up to `execution.max_attempts` attempts (the kind's default, else 1),
 * backing off 1 s, 2 s, 4 s … (at most 1 min) between them, or as long as
 * the node's service asked (Retry-After, at most 5 min). A node its runner
 * turned away as busy (a full queue: the node never ran) is tried again
 * without spending an attempt, its Retry-After doubling up to 30 s, until the
 * case deadline: a burst is delayed, not failed. No history recorded before
 * this rule has a busy failure, so they replay unchanged.
 */
async function runWithRetries<T>(
  node: WorkflowNode,
  request: RunNodeRequest,
  hooks: AttemptHooks,
  run: (request: RunNodeRequest) => Promise<T>,
): Promise<T> {
  const { maxAttempts } = nodeExecution(node, nodeKinds.of(node));
  let turnedAway = 0;
  for (let attempt = 1; ;) {
    hooks.started(attempt);
    try {
      return await run({ ...request, attempt });
    } catch (err) {
      const failure = nodeApplicationFailure(err);
      if (isCancellation(err) || failure?.nonRetryable === true) throw err;
      const details = failure?.details?.[0] as NodeFailureDetails | undefined;
      if (details?.error.kind === busyFailureKind) {
        turnedAway += 1;
        const wait = Math.max(details.retryAfterMs ?? 0, 1000) * 2 ** Math.min(turnedAway - 1, 5);
        await sleep(Math.min(wait, MAX_BUSY_WAIT_MS));
        continue;
      }
      if (attempt >= maxAttempts) throw err;
      hooks.retrying(details);
      const backoff = Math.min(1000 * 2 ** (attempt - 1), 60_000);
      await sleep(Math.max(backoff, Math.min(details?.retryAfterMs ?? 0, MAX_RETRY_AFTER_MS)));
      attempt += 1;
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
      return {
        error: {
          message: `Node ${node.name} timed out (${nodeExecution(node, nodeKinds.of(node)).timeoutMs} ms per attempt)`,
          kind: 'timeout',
        },
      };
    }
    return { error: { message: cause?.message ?? err.message, kind: 'error' } };
  }
  if (err instanceof NodeFailure) return { error: { message: err.message, kind: err.kind } };
  return { error: { message: err instanceof Error ? err.message : String(err), kind: 'handler' } };
}

/**
 * An inline kind's node, in the workflow (no activity, no history event).
 * Async on purpose: the node settles one microtask later, as it always has,
 * so the order of commands (and the replay of cases running across a deploy)
 * stays the same.
 */
// eslint-disable-next-line @typescript-eslint/require-await -- async without await on purpose (above)
async function evaluateInlineNode(
  kind: InlineNodeKind,
  input: CaseRunInput,
  node: WorkflowNode,
  inputs: Record<string, unknown>,
): Promise<NodeCompletion> {
  return evaluateInline(kind, input, node, inputs);
}

/**
 * A waiting kind's node (human_task): the case waits for a person, the audit
 * says `waiting` meanwhile. Runs started before waits existed never had such
 * a node saved against them, but their code path stays as it was: the node
 * fails there.
 */
async function waitForPerson(
  input: CaseRunInput,
  waits: PersonWaits,
  scheduler: CaseScheduler,
  id: string,
  inputs: Record<string, unknown>,
): Promise<NodeCompletion> {
  const node = scheduler.node(id);
  const kind = nodeKinds.of(node);
  if (!isWaitingKind(kind) || !changeInForce(input, 'human-task-waits'))
    throw new NodeFailure(`${handlerClassName(node)} needs a case started by a newer caseflow`, {
      kind: 'configuration',
      retryable: false,
    });
  scheduler.attempt(id, 1);
  return waits.run(kind, node, inputs, (waiting) => scheduler.waiting(id, waiting));
}

/**
 * Runs the nodes the scheduler hands out until none is left or the case is
 * ending; independent branches run in parallel, at most `maxParallelNodes`
 * activity nodes at once (the others wait for a slot; inline nodes take
 * none). Inline kinds run in the workflow, others as activities. The
 * deadline is a timer (and a clock check at every node end); cancellation
 * comes from Temporal.
 */
async function runGraph(
  input: CaseRunInput,
  scheduler: CaseScheduler,
  waits: PersonWaits,
): Promise<{ ending: RunEnding; ended?: EndedInGraph }> {
  const now = () => new Date().toISOString();
  const startedAt = Date.now();
  const tasks: Promise<void>[] = [];
  let deadlinePassed = false;
  const graphScope = new CancellationScope();
  const deadlineScope = new CancellationScope();
  // Runs started before the cap start every ready node at once, as their histories recorded.
  const slots = changeInForce(input, 'case-node-concurrency-cap')
    ? new NodeSlots(input.maxParallelNodes ?? defaultMaxParallelNodes)
    : undefined;
  // Runs started before outcomes took turns react to each as it comes, as their histories recorded.
  const turns = changeInForce(input, 'case-node-outcomes-in-turn') ? new NodeTurns() : undefined;
  // Only activity nodes take a slot: a node waiting on a person for days must not hold one.
  const takesSlot = (id: string): boolean =>
    slots !== undefined && nodeKinds.of(scheduler.node(id))?.runs === 'activity';
  // Only runs started with the change fuse (no patch asked): a run started before keeps its path to its end.
  const fuses = knownAtStart(input.revision, 'case-last-node-and-end-fused');
  let ended: EndedInGraph | undefined;
  const deadlineAt = () => startedAt + input.deadlineMs + waits.waitedMs();
  let late = false;

  const launch = (ids: string[]): void => {
    for (const id of ids) if (!takesSlot(id) || slots?.take(id) === true) tasks.push(execute(id));
  };

  const execute = async (id: string): Promise<void> => {
    // Nothing new starts once the case is ending (failure elsewhere, cancel, deadline).
    if (graphScope.consideredCancelled) return;
    const node = scheduler.node(id);
    scheduler.begin(id, now());
    try {
      const inputs = scheduler.inputsOf(id);
      const kind = nodeKinds.of(node);
      if (kind?.runs === 'inline') {
        const completion = await evaluateInlineNode(kind, input, node, inputs);
        scheduler.attempt(id, 1);
        scheduler.complete(id, completion);
      } else if (isWaitingKind(kind)) {
        scheduler.complete(id, await waitForPerson(input, waits, scheduler, id, inputs));
      } else if (kind?.runs === 'child' && changeInForce(input, 'call-workflow-child-case')) {
        // One attempt: the child case is the unit a user reruns; its own nodes retry as they are set to.
        scheduler.attempt(id, 1);
        const link = (childCaseId: string) => scheduler.linkChild(id, childCaseId);
        // The deadline leaves out time spent waiting on people, so its end moves on by that much.
        const waited = changeInForce(input, 'call-workflow-deadline-after-waits') ? waits.waitedMs() : 0;
        const deadlineAt = startedAt + input.deadlineMs + waited;
        scheduler.complete(id, await runChildCase(input, node, inputs, { deadlineAt, link, turns }));
      } else {
        const { caseId, organizationId, workspaceId } = input;
        const request = { caseId, organizationId, workspaceId, node, inputs, attempt: 1 };
        const hooks: AttemptHooks = {
          started: (attempt) => scheduler.attempt(id, attempt),
          retrying: (details) => scheduler.spend(id, details?.usage),
        };
        const local = nodeExecution(node, kind).timeoutMs <= localActivityMaxMs;
        const tail = fuses && local && !deadlinePassed ? scheduler.lastNodeTail(id) : undefined;
        if (!tail) scheduler.complete(id, await runWithRetries(node, request, hooks, nodeActivity(node, turns)));
        else {
          const fused = lastNodeActivity(input, node, tail, deadlineAt(), turns);
          const outcome = await runWithRetries(node, request, hooks, fused.run);
          if (outcome.ended === 'before') {
            ended = { store: outcome.end };
            return;
          }
          if (outcome.ended === 'here') {
            const at = new Date(fused.calledAt()).toISOString();
            ended = { status: endAfterLastNode(scheduler, input, id, outcome.node, at), attempt: outcome };
            return;
          }
          // Not ended by the activity: the node's completion, and the usual path on from here.
          late = outcome.ended === 'late';
          if (outcome.ended === 'unwritten') log.warn('the end after the last node was not written', { caseId });
          scheduler.complete(id, outcome.node);
        }
      }
    } catch (err) {
      if (isCancellation(err)) scheduler.cancel(id);
      else {
        const { error, details } = failureOf(err, node);
        if (scheduler.fail(id, error, details)) graphScope.cancel();
      }
    }
    const ready = scheduler.settle(id, now());
    // A local activity holds the workflow task, so the deadline timer may not have fired yet: check the clock too.
    if ((late || Date.now() - startedAt - waits.waitedMs() >= input.deadlineMs) && !deadlinePassed) {
      deadlinePassed = true;
      graphScope.cancel();
    }
    // The slot goes to the oldest waiting node before this node's children queue for one.
    const next = takesSlot(id) ? slots?.release() : undefined;
    if (next !== undefined) tasks.push(execute(next));
    launch(ready);
  };

  void deadlineScope
    .run(() => activeDeadline(input.deadlineMs, startedAt, waits))
    .then(
      () => {
        deadlinePassed = true;
        graphScope.cancel();
      },
      // The timer is cancelled when the case ends first, or by a cancel request.
      () => undefined,
    );

  await graphScope.run(async () => {
    launch(scheduler.start());
    // Tasks launch more tasks as nodes finish: wait until a round adds none.
    for (let settledCount = 0; settledCount < tasks.length;) {
      const batch = tasks.length;
      await Promise.all(tasks.slice(settledCount));
      settledCount = batch;
    }
  });
  deadlineScope.cancel();
  const ending = { deadlinePassed, cancelled: graphScope.consideredCancelled, deadlineMs: input.deadlineMs };
  return ended ? { ending, ended } : { ending };
}

/**
 * Writes the end (status, results, node audit), then delivers the callback
 * when a URL was given: the first attempt right here (no other workflow, no
 * task queue round trip), in the same local activity as the write; only
 * when it fails does a retry workflow start, which keeps trying for hours.
 * Runs started before these changes keep their paths (the patch markers),
 * so their histories still replay.
 */
async function recordEnd(
  input: CaseRunInput,
  status: TerminalStatus,
  final: CaseProgress,
): Promise<RecordedEnd | undefined> {
  // An activity argument, not a command: runs replay the same with or without workspaceId.
  const finalize = {
    caseId: input.caseId,
    workspaceId: input.workspaceId,
    status,
    runId: workflowInfo().runId,
    progress: final,
  };
  const { callbackUrl } = input;
  const delivery = callbackUrl ? caseCallbackDelivery({ ...input, callbackUrl }, status, final) : undefined;
  if (changeInForce(input, 'case-end-in-one-local-activity')) {
    const callback = delivery && { ...delivery, workflowId: workflowInfo().workflowId };
    const ended = callback ? await endCaseAndCallBack({ finalize, callback }) : await endCase({ finalize });
    if ('store' in ended) return ended.store;
    if (delivery) await afterFirstAttempt(input, delivery, ended);
    return undefined;
  }
  await finalizeCase(finalize);
  if (!delivery) return;
  let attemptsMade = 0;
  if (changeInForce(input, 'callback-first-attempt-in-run')) {
    try {
      const first = await firstCallbackAttempt({ ...delivery, workflowId: workflowInfo().workflowId });
      if (first.outcome !== 'retry') return;
      attemptsMade = 1;
    } catch (err) {
      warnFirstAttempt(input, err instanceof Error ? err.message : String(err));
    }
  }
  await startRetries(input, delivery, attemptsMade);
}

/** The retry workflow, when the first attempt made with the end did not deliver (or could not run). */
async function afterFirstAttempt(input: CaseRunInput, delivery: CallbackDeliveryInput, ended: EndCaseResult) {
  if ('error' in ended) warnFirstAttempt(input, ended.error);
  else if (ended.firstAttempt?.outcome !== 'retry') return;
  await startRetries(input, delivery, 'error' in ended ? 0 : 1);
}

/**
 * The end the last node's activity recorded, or the store's (an earlier call wrote it: its callback was attempted
 * then, or its pending delivery row is the delivery sweep's), as the case's: tagged, the callback's retries started
 * when the first attempt did not deliver.
 */
async function endedInGraph(
  input: CaseRunInput,
  scheduler: CaseScheduler,
  ended: EndedInGraph,
): Promise<{ status: TerminalStatus; final: CaseProgress }> {
  if ('store' in ended) {
    tagStatus(input, ended.store.status);
    return { status: ended.store.status, final: storeProgress(scheduler, ended.store) };
  }
  const { status, attempt } = ended;
  tagStatus(input, status);
  const final: CaseProgress = { ...scheduler.progress(), remaining: [] };
  const { callbackUrl } = input;
  if (callbackUrl)
    await CancellationScope.nonCancellable(() =>
      afterFirstAttempt(input, caseCallbackDelivery({ ...input, callbackUrl }, status, final), attempt),
    );
  return { status, final };
}

/** The store or the signing secret failed us: the retry workflow starts from the first attempt. */
function warnFirstAttempt(input: CaseRunInput, error: string): void {
  log.warn('first callback attempt could not run', { caseId: input.caseId, error });
}

/** The retry workflow, which keeps trying for hours; it starts after the attempts already made. */
async function startRetries(input: CaseRunInput, delivery: CallbackDeliveryInput, attemptsMade: number): Promise<void> {
  try {
    await startChildWorkflow(callbackDeliveryContract, {
      workflowId: caseCallbackWorkflowId(input.caseId),
      args: [attemptsMade > 0 ? { ...delivery, attemptsMade } : delivery],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      // Found in the Temporal UI by the case's own tags (with its final status).
      typedSearchAttributes: workflowInfo().typedSearchAttributes,
    });
  } catch (err) {
    // The case outcome is recorded already; a callback that cannot start must not change it.
    log.error('callback delivery could not start', {
      caseId: input.caseId,
      error: err instanceof Error ? err.message : String(err),
    });
  }
}

/**
 * The run's CaseflowCaseStatus becomes the case's end, so the Temporal UI
 * finds "failed cases of workspace X". Only runs tagged at start (a namespace
 * with our search attributes) are; runs started before this change keep
 * their history (the patch marker).
 */
function tagStatus(input: CaseRunInput, status: TerminalStatus): void {
  if (workflowInfo().typedSearchAttributes.get(searchAttributes.caseStatus) === undefined) return;
  if (changeInForce(input, 'case-status-search-attribute'))
    upsertSearchAttributes([{ key: searchAttributes.caseStatus, value: status }]);
}

/** The failing node of a FAILED case, as the run's failure details (none when no node failed it). */
function failureDetails(final: CaseProgress): CaseFailureDetails[] {
  const nodeId = final.error?.nodeId;
  const node = nodeId === undefined ? undefined : final.nodes[nodeId];
  if (!nodeId || !node) return [];
  return [
    {
      nodeId,
      nodeName: node.name,
      handlerClass: node.handlerClass,
      ...(node.error?.kind ? { errorKind: node.error.kind } : {}),
    },
  ];
}

/**
 * The nodes a rerun takes as completed with their recorded outputs. Runs
 * that carry some were started with the change in force; older runs carry
 * none and ask nothing, so their histories replay unchanged.
 */
function reusedNodes(input: CaseRunInput): CaseRunInput['reused'] {
  return input.reused !== undefined && changeInForce(input, 'case-rerun-reused-nodes') ? input.reused : undefined;
}

/** The case's end, recorded by the run: its status tagged, then the end written outside cancellation. */
async function endHere(
  input: CaseRunInput,
  scheduler: CaseScheduler,
  status: TerminalStatus,
): Promise<{ status: TerminalStatus; final: CaseProgress }> {
  tagStatus(input, status);
  const final: CaseProgress = { ...scheduler.progress(), remaining: [] };
  const store = await CancellationScope.nonCancellable(() => recordEnd(input, status, final));
  // The case ended otherwise (a fused last node's call that timed out, say, still wrote its end): the run ends as
  // the store says. Only runs started with the fused last node: older ones replay as they ran.
  if (!store || !knownAtStart(input.revision, 'case-last-node-and-end-fused')) return { status, final };
  tagStatus(input, store.status);
  return { status: store.status, final: storeProgress(scheduler, store) };
}

/** The run's progress with the case's end as the store holds it. */
function storeProgress(scheduler: CaseScheduler, store: RecordedEnd): CaseProgress {
  const { status, results, error } = store;
  const progress = { ...scheduler.progress(), status, results, remaining: [] };
  delete progress.error;
  return error ? { ...progress, error } : progress;
}

/** The case's end after its graph ran: the one its last node's activity recorded, or recorded now. */
function endGraph(
  input: CaseRunInput,
  scheduler: CaseScheduler,
  graph: Awaited<ReturnType<typeof runGraph>>,
): Promise<{ status: TerminalStatus; final: CaseProgress }> {
  return graph.ended
    ? endedInGraph(input, scheduler, graph.ended)
    : endHere(input, scheduler, scheduler.finish(graph.ending));
}

/**
 * One case: runs the graph of its workflow version (see CaseScheduler for
 * the rules), then records the end outside cancellation.
 */
export const caseRun: WorkflowOf<typeof caseRunContract> = async function caseRun(input) {
  refuseNewerRevision(input);
  const scheduler = new CaseScheduler({ ...input, reused: reusedNodes(input) });
  const waits = new PersonWaits(input, (change) => changeInForce(input, change));
  setHandler(caseProgressQuery, () => ({ ...scheduler.progress(), waitingTasks: waits.waiting() }));
  const refusal = await creatorRefusal(input);
  const { status, final } =
    refusal === undefined
      ? await endGraph(input, scheduler, await runGraph(input, scheduler, waits))
      : await endHere(input, scheduler, scheduler.refuse(refusal));

  // The Temporal run ends the way the case did, so the Web UI tells the same story.
  if (status === 'CANCELLED') throw new CancelledFailure('The case was cancelled');
  if (status === 'FAILED')
    throw ApplicationFailure.create({
      message: final.error?.message ?? 'The case failed',
      type: caseFailedType,
      nonRetryable: true,
      details: failureDetails(final),
    });
  if (status === 'TIMED_OUT')
    throw ApplicationFailure.nonRetryable(final.error?.message ?? 'The case timed out', caseTimedOutType);
  return { status, results: final.results };
};
