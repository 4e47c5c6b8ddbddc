import { ApplicationFailure, Context, type Info } from '@temporalio/activity';
import { newDelivery, type FirstAttemptResult, type OpenDeliveryInput } from '../src/callbacks/delivery.js';
import { CaseScheduler, type LastNodeTail } from '../src/domain/case-scheduler.js';
import {
  nodeFailedType,
  type FinalizeCaseInput,
  type NodeError,
  type NodeLog,
  type RecordedEnd,
} from '../src/domain/cases.js';
import { endAfterLastNode, lastNodeEndBudgetMs } from '../src/domain/last-node.js';
import { caseCallbackDelivery } from '../src/temporal/contracts/callback-delivery.js';
import type { CreatorCheck } from '../src/temporal/contracts/case-run.js';
import type { WorkflowNode } from '../src/domain/graph.js';
import { NodeFailure, type NodeContext, type NodeRunResult } from '../src/domain/node-kinds/kind.js';
import { processSchemaOf } from '../src/domain/node-kinds/process-schema.js';
import { nodeKinds } from '../src/domain/node-kinds/registry.js';
import type { NodeServices } from '../src/domain/node-kinds/services.js';
import type { TokenUsage } from '../src/domain/token-usage.js';
import { handlerClassName } from '../src/domain/vocabulary.js';
import { jsonBytes } from '../src/cases/payload-limits.js';
import { nodeFiles } from '../src/files/node-files.js';
import type { ActivityDeps } from './deps.js';

export interface RunNodeRequest {
  caseId: string;
  organizationId: string;
  workspaceId: string;
  node: WorkflowNode;
  inputs: Record<string, unknown>;
  /** 1 for the first attempt; the workflow retries (so the audit counts attempts). */
  attempt: number;
}

export interface RunNodeResponse {
  outputs: Record<string, unknown>;
  logs: NodeLog[];
  usage?: TokenUsage;
  startedAt: string;
  finishedAt: string;
}

/** Details of a node's ApplicationFailure (type NodeFailed), read back by the workflow for the audit. */
export interface NodeFailureDetails {
  error: NodeError;
  logs: NodeLog[];
  usage?: TokenUsage;
  /** The wait the node's service asked for before another attempt (a 429's Retry-After). */
  retryAfterMs?: number;
  startedAt: string;
  finishedAt: string;
}

export { nodeFailedType };

/** The end of a case and, when it has a callback URL, the callback's first attempt. */
export interface EndCaseInput {
  finalize: FinalizeCaseInput;
  callback?: OpenDeliveryInput;
}

/** How the first attempt went; `error` when it could not run at all (store or signing secret failed). */
/**
 * The callback's first attempt made with the end (or why it could not run); `store`, the case's end when it had
 * ended otherwise with another status (nothing written, no attempt: that end has its own callback).
 */
export type EndCaseResult = { firstAttempt?: FirstAttemptResult; store?: RecordedEnd } | { error: string };

/**
 * The case's last activity node and the case's end in one local activity (workflows/case-run.ts). `now` and
 * `deadlineAt` are the workflow's clock when it called and the case's deadline on it (ms).
 */
export interface LastNodeRequest {
  node: RunNodeRequest;
  tail: LastNodeTail;
  run: {
    runId: string;
    workflowId: string;
    caseInputs: Record<string, unknown>;
    deadlineMs: number;
    callbackUrl?: string;
  };
  now: number;
  deadlineAt: number;
}

/**
 * What the fused activity did after the node completed: `late`, the deadline had passed (nothing written, the
 * workflow ends the case TIMED_OUT); `unwritten`, the write failed (the workflow records the end the usual way);
 * `here`, this activity wrote the end (and made the callback's first attempt, or could not); `before`, the case had
 * ended already (a retried call): the store's end, which the workflow takes as the case's.
 */
export type LastNodeResult =
  | ({ node: RunNodeResponse } & (
      { ended: 'late' } | { ended: 'unwritten'; error: string } | ({ ended: 'here' } & EndCaseResult)
    ))
  | { ended: 'before'; end: RecordedEnd };

export interface CaseActivities {
  runNode(request: RunNodeRequest): Promise<RunNodeResponse>;
  runLastNode(request: LastNodeRequest): Promise<LastNodeResult>;
  /** The case's recorded end, or null while it has none. */
  caseEnd(caseId: string): Promise<RecordedEnd | null>;
  /** Why the case's creator key may no longer start it, or null when it still may. */
  checkCreator(check: CreatorCheck): Promise<string | null>;
  finalizeCase(input: FinalizeCaseInput): Promise<boolean>;
  endCase(input: EndCaseInput): Promise<EndCaseResult>;
}

/** The case engine's activities: one node of a case, and the end of a case. */
export function createCaseActivities(deps: ActivityDeps): CaseActivities {
  const { services } = deps;
  const nodeServices: NodeServices = {
    python: deps.python,
    files: nodeFiles(services.files),
    codeVersion: (organizationId, codeId, versionId) =>
      services.codeNodes.findRunnableVersion(organizationId, codeId, versionId),
    integrationAction: (scope, request) => services.connectionRuntime.runAction(scope, request),
    llm: services.llmNodes,
  };
  const maxBytes = deps.config.cases.maxNodeOutputBytes;

  /** One attempt of a node, until `deadline` (epoch ms); its own failures throw as NodeFailed. */
  async function runAttempt(request: RunNodeRequest, deadline: number): Promise<RunNodeResponse> {
    const startedAt = new Date().toISOString();
    try {
      const attempt = { deadline, signal: Context.current().cancellationSignal };
      const result = await runKind(request, attempt, nodeServices);
      const size = jsonBytes(result.outputs);
      if (size > maxBytes) {
        // The outputs would go into Temporal history (the activity result) and on to the next nodes' inputs.
        throw new NodeFailure(
          `Node outputs are ${size} bytes as JSON, over the limit of ${maxBytes} (cases.maxNodeOutputBytes); return large data as a file`,
          { kind: 'limit', logs: result.logs, retryable: false },
        );
      }
      return {
        outputs: result.outputs,
        logs: boundLogs(result.logs, maxBytes),
        ...(result.usage ? { usage: result.usage } : {}),
        startedAt,
        finishedAt: new Date().toISOString(),
      };
    } catch (err) {
      const failure =
        err instanceof NodeFailure
          ? err
          : new NodeFailure(err instanceof Error ? err.message : String(err), { kind: 'handler' });
      if (!(err instanceof NodeFailure))
        deps.logger.error({ err, caseId: request.caseId, nodeId: request.node.id }, 'node handler threw');
      const details: NodeFailureDetails = {
        error: {
          message: failure.message,
          kind: failure.kind,
          ...(failure.traceback ? { traceback: failure.traceback } : {}),
        },
        logs: boundLogs(failure.logs, maxBytes),
        ...(failure.usage ? { usage: failure.usage } : {}),
        ...(failure.retryAfterMs !== undefined ? { retryAfterMs: failure.retryAfterMs } : {}),
        startedAt,
        finishedAt: new Date().toISOString(),
      };
      throw ApplicationFailure.create({
        message: failure.message,
        type: nodeFailedType,
        nonRetryable: !failure.retryable,
        details: [details],
      });
    }
  }

  /** The end recorded (the callback's delivery row with it), then the callback's first attempt. */
  async function end(input: EndCaseInput): Promise<{ recorded: boolean; attempt: () => Promise<EndCaseResult> }> {
    const recorded = await services.cases.finalize(input.finalize, input.callback && newDelivery(input.callback));
    deps.tracing.recordNodeSpans(input.finalize);
    const { callback } = input;
    const attempt = async (): Promise<EndCaseResult> => {
      if (!callback) return {};
      try {
        return { firstAttempt: await services.callbacks.firstAttempt(callback, recorded) };
      } catch (err) {
        return { error: err instanceof Error ? err.message : String(err) };
      }
    };
    return { recorded, attempt };
  }

  const caseEnd = async (caseId: string): Promise<RecordedEnd | null> =>
    (await services.cases.recordedEnd(caseId)) ?? null;

  return {
    runNode(request) {
      return runAttempt(request, attemptDeadline(Context.current().info, Date.now()));
    },

    /**
     * The node, then (it completed, within the case's deadline) the end it makes, written here. Idempotent on the
     * run: when the case has ended already (this call is a retry of one that wrote the end and was lost), nothing
     * is written or sent again and the store's end is returned.
     */
    async runLastNode(request) {
      const calledAt = Date.now();
      const { info } = Context.current();
      const node = await runAttempt(request.node, attemptDeadline(info, calledAt) - lastNodeEndBudgetMs);
      // The workflow's clock at the node's end, as the deadline check on the usual path reads it.
      if (request.now + (Date.now() - calledAt) >= request.deadlineAt) return { node, ended: 'late' };
      const { caseId, organizationId, workspaceId } = request.node;
      const { run } = request;
      const scheduler = new CaseScheduler(
        { caseId, graph: request.tail.graph, inputs: run.caseInputs },
        request.tail.snapshot,
      );
      const at = new Date(request.now).toISOString();
      const status = endAfterLastNode(
        scheduler,
        { caseId, organizationId, workspaceId, inputs: run.caseInputs, deadlineMs: run.deadlineMs },
        request.node.node.id,
        node,
        at,
      );
      const progress = { ...scheduler.progress(), remaining: [] };
      const finalize = { caseId, workspaceId, status, runId: run.runId, progress };
      const callback =
        run.callbackUrl === undefined
          ? undefined
          : {
              ...caseCallbackDelivery({ caseId, workspaceId, callbackUrl: run.callbackUrl }, status, progress),
              workflowId: run.workflowId,
            };
      // Timed out meanwhile: the workflow has moved on (its own end, or the node again), so this call writes nothing.
      Context.current().cancellationSignal.throwIfAborted();
      let ending: Awaited<ReturnType<typeof end>>;
      try {
        ending = await end({ finalize, ...(callback ? { callback } : {}) });
      } catch (err) {
        // end() may fail after its commit (an event dispatch): an end the store holds counts as written.
        const recorded = await caseEnd(caseId).catch(() => null);
        if (recorded) return { ended: 'before', end: recorded };
        return { node, ended: 'unwritten', error: err instanceof Error ? err.message : String(err) };
      }
      if (!ending.recorded) {
        const recorded = await caseEnd(caseId);
        if (recorded) return { ended: 'before', end: recorded };
      }
      return { node, ended: 'here', ...(await ending.attempt()) };
    },

    caseEnd,

    checkCreator(check) {
      return services.cases.creatorRefusal(check);
    },

    async finalizeCase(input) {
      const recorded = await services.cases.finalize(input);
      deps.tracing.recordNodeSpans(input);
      return recorded;
    },

    /**
     * One local activity instead of two: each costs the workflow task a
     * round trip through the SDK, which is most of a short case's time. A
     * failed write throws (retried, nothing sent yet); a failed first attempt
     * is a result, never retried here (the retry workflow takes over).
     */
    async endCase(input) {
      const { recorded, attempt } = await end(input);
      // Ended otherwise meanwhile (the reconciler recorded a terminated run, a fused last node's call that timed out
      // wrote its end): that end has its own callback, and this one's status would contradict it. A retried end of
      // the same status still attempts.
      const store = recorded ? null : await caseEnd(input.finalize.caseId);
      if (store && store.status !== input.finalize.status) return { store };
      return attempt();
    },
  };
}

/**
 * When this attempt's activity times out (epoch ms): its start-to-close from now, or its
 * schedule-to-close when that comes first. Work still queued past it would run for nobody.
 */
function attemptDeadline(info: Info, now: number): number {
  const startToClose = info.startToCloseTimeoutMs > 0 ? now + info.startToCloseTimeoutMs : Infinity;
  const scheduleToClose =
    info.scheduleToCloseTimeoutMs > 0 ? info.scheduledTimestampMs + info.scheduleToCloseTimeoutMs : Infinity;
  return Math.min(startToClose, scheduleToClose);
}

/**
 * One node by its kind, with `process` parsed by the kind's schema (saved
 * versions were validated, but a kind's schema may have changed since). A
 * kind that runs inline in the workflow runs here too when the workflow
 * bundle does not know it (a kind registered at run time).
 */
async function runKind(
  request: RunNodeRequest,
  attempt: Pick<NodeContext<unknown>, 'deadline' | 'signal'>,
  services: NodeServices,
): Promise<NodeRunResult> {
  const kind = nodeKinds.of(request.node);
  if (!kind)
    throw new NodeFailure(`No node kind for handler_class ${handlerClassName(request.node)}`, {
      kind: 'configuration',
      retryable: false,
    });
  const parsed = processSchemaOf(kind).safeParse(request.node.process ?? {});
  if (!parsed.success) {
    const problems = parsed.error.issues
      .map((issue) => [...issue.path.map(String), issue.message].join(': '))
      .join('; ');
    throw new NodeFailure(`${kind.handlerClass} process is invalid: ${problems}`, {
      kind: 'configuration',
      retryable: false,
    });
  }
  if (kind.runs === 'waiting')
    throw new NodeFailure(`${kind.handlerClass} waits for a person in the case run, never in an activity`, {
      kind: 'configuration',
      retryable: false,
    });
  const context = { ...request, ...attempt, process: parsed.data, caseInputs: {} };
  if (kind.runs === 'child')
    // Only a worker whose bundle lacks the call-workflow-child-case change sends one here.
    throw new NodeFailure(
      `${kind.handlerClass} runs as a child case of the case engine; this worker's engine is older`,
      {
        kind: 'configuration',
        retryable: false,
      },
    );
  return kind.runs === 'inline' ? kind.evaluate(context) : kind.run(context, services);
}

/**
 * Logs travel with the outputs through history: keep them within the same
 * budget (the first entries, the last one cut), saying how much was dropped.
 */
function boundLogs(logs: NodeLog[], maxBytes: number): NodeLog[] {
  let room = maxBytes;
  const kept: NodeLog[] = [];
  for (const [i, log] of logs.entries()) {
    const size = jsonBytes(log);
    if (size <= room) {
      kept.push(log);
      room -= size;
      continue;
    }
    const cut = Buffer.from(log.message, 'utf8')
      .subarray(0, Math.max(0, room - 200))
      .toString('utf8');
    if (cut.length > 0) kept.push({ ...log, message: cut });
    kept.push({
      level: 'warning',
      message: `Logs cut: ${logs.length - i} of ${logs.length} entries (partly) dropped, over ${maxBytes} bytes as JSON`,
      at: log.at,
    });
    break;
  }
  return kept;
}
