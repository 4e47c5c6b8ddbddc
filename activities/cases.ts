import { ApplicationFailure } from '@temporalio/activity';
import type { FinalizeCaseInput, NodeError, NodeLog } from '../src/domain/cases.js';
import type { WorkflowNode } from '../src/domain/graph.js';
import { handlerClassName } from '../src/domain/handler-classes.js';
import { jsonBytes } from '../src/cases/payload-limits.js';
import type { ActivityDeps } from './deps.js';
import { createNodeHandlers } from './node-handlers/registry.js';
import { NodeFailure } from './node-handlers/types.js';

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
  startedAt: string;
  finishedAt: string;
}

/** Details of a node's ApplicationFailure (type NodeFailed), read back by the workflow for the audit. */
export interface NodeFailureDetails {
  error: NodeError;
  logs: NodeLog[];
  startedAt: string;
  finishedAt: string;
}

export const nodeFailedType = 'NodeFailed';

export interface CaseActivities {
  runNode(request: RunNodeRequest): Promise<RunNodeResponse>;
  finalizeCase(input: FinalizeCaseInput): Promise<boolean>;
}

/** The case engine's activities: one node of a case, and the end of a case. */
export function createCaseActivities(deps: ActivityDeps): CaseActivities {
  const { services } = deps;
  const handlers = createNodeHandlers({
    python: deps.python,
    files: services.files,
    loadCodeVersion: (organizationId, codeId, versionId) => services.codeNodes.findRunnableVersion(organizationId, codeId, versionId),
  });
  const maxBytes = deps.config.cases.maxNodeOutputBytes;

  return {
    async runNode(request) {
      const { attempt } = request;
      const startedAt = new Date().toISOString();
      const name = handlerClassName(request.node);
      const handler = Object.hasOwn(handlers, name) ? handlers[name] : undefined;
      try {
        if (!handler) throw new NodeFailure(`No node handler for handler_class ${name}`, 'configuration', [], undefined, false);
        const result = await handler.run({ ...request, caseInputs: {}, attempt });
        const size = jsonBytes(result.outputs);
        if (size > maxBytes) {
          // The outputs would go into Temporal history (the activity result) and on to the next nodes' inputs.
          throw new NodeFailure(
            `Node outputs are ${size} bytes as JSON, over the limit of ${maxBytes} (cases.maxNodeOutputBytes); return large data as a file`,
            'limit',
            result.logs,
            undefined,
            false,
          );
        }
        return { outputs: result.outputs, logs: boundLogs(result.logs, maxBytes), startedAt, finishedAt: new Date().toISOString() };
      } catch (err) {
        const failure = err instanceof NodeFailure ? err : new NodeFailure(err instanceof Error ? err.message : String(err), 'handler');
        if (!(err instanceof NodeFailure)) deps.logger.error({ err, caseId: request.caseId, nodeId: request.node.id }, 'node handler threw');
        const details: NodeFailureDetails = {
          error: { message: failure.message, kind: failure.kind, ...(failure.traceback ? { traceback: failure.traceback } : {}) },
          logs: boundLogs(failure.logs, maxBytes),
          startedAt,
          finishedAt: new Date().toISOString(),
        };
        throw ApplicationFailure.create({ message: failure.message, type: nodeFailedType, nonRetryable: !failure.retryable, details: [details] });
      }
    },

    async finalizeCase(input) {
      return services.cases.finalize(input);
    },
  };
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
    const cut = Buffer.from(log.message, 'utf8').subarray(0, Math.max(0, room - 200)).toString('utf8');
    if (cut.length > 0) kept.push({ ...log, message: cut });
    kept.push({ level: 'warning', message: `Logs cut: ${logs.length - i} of ${logs.length} entries (partly) dropped, over ${maxBytes} bytes as JSON`, at: log.at });
    break;
  }
  return kept;
}
