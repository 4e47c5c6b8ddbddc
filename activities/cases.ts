import { ApplicationFailure, Context, type Info } from '@temporalio/activity';
import { newDelivery, type FirstAttemptResult, type OpenDeliveryInput } from '../src/callbacks/delivery.js';
import type { FinalizeCaseInput, NodeError, NodeLog } from '../src/domain/cases.js';
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

export const nodeFailedType = 'NodeFailed';

/** The end of a case and, when it has a callback URL, the callback's first attempt. */
export interface EndCaseInput {
  finalize: FinalizeCaseInput;
  callback?: OpenDeliveryInput;
}

/** How the first attempt went; `error` when it could not run at all (store or signing secret failed). */
export type EndCaseResult = { firstAttempt?: FirstAttemptResult } | { error: string };

export interface CaseActivities {
  runNode(request: RunNodeRequest): Promise<RunNodeResponse>;
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

  return {
    async runNode(request) {
      const startedAt = new Date().toISOString();
      const { info, cancellationSignal } = Context.current();
      try {
        const attempt = { deadline: attemptDeadline(info, Date.now()), signal: cancellationSignal };
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
    },

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
      // The callback's delivery row commits with the end (one transaction). When the end was recorded already (a
      // retried end, or another path's), the attempt writes the row itself (idempotent).
      const recorded = await services.cases.finalize(input.finalize, input.callback && newDelivery(input.callback));
      deps.tracing.recordNodeSpans(input.finalize);
      if (!input.callback) return {};
      // Ended otherwise meanwhile (the run was terminated and the reconciler recorded it): that end has its own
      // callback; this one's status would contradict it. A retried end of the same status still attempts.
      if (!recorded && !(await services.cases.endedAs(input.finalize.caseId, input.finalize.status))) return {};
      try {
        return { firstAttempt: await services.callbacks.firstAttempt(input.callback, recorded) };
      } catch (err) {
        return { error: err instanceof Error ? err.message : String(err) };
      }
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
