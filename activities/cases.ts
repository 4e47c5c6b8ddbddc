import { ApplicationFailure } from '@temporalio/activity';
import type { FinalizeCaseInput, NodeError, NodeLog } from '../src/domain/cases.js';
import type { WorkflowNode } from '../src/domain/graph.js';
import { handlerClassName } from '../src/domain/handler-classes.js';
import { createFileService } from '../src/files/file-service.js';
import { CaseRepo } from '../src/store/case-repo.js';
import { CodeNodeRepo } from '../src/store/code-node-repo.js';
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
  const repo = new CaseRepo(deps.db);
  const files = createFileService({ db: deps.db, config: deps.config, logger: deps.logger });
  const codeNodes = new CodeNodeRepo(deps.db);
  const handlers = createNodeHandlers({
    python: deps.python,
    files,
    loadCodeVersion: async (organizationId, codeId, versionId) => (await codeNodes.findVersionIn(organizationId, codeId, versionId))?.sourceCode,
  });

  return {
    async runNode(request) {
      const { attempt } = request;
      const startedAt = new Date().toISOString();
      const name = handlerClassName(request.node);
      const handler = Object.hasOwn(handlers, name) ? handlers[name] : undefined;
      try {
        if (!handler) throw new NodeFailure(`No node handler for handler_class ${name}`, 'configuration', [], undefined, false);
        const result = await handler.run({ ...request, caseInputs: {}, attempt });
        return { outputs: result.outputs, logs: result.logs, startedAt, finishedAt: new Date().toISOString() };
      } catch (err) {
        const failure = err instanceof NodeFailure ? err : new NodeFailure(err instanceof Error ? err.message : String(err), 'handler');
        if (!(err instanceof NodeFailure)) deps.logger.error({ err, caseId: request.caseId, nodeId: request.node.id }, 'node handler threw');
        const details: NodeFailureDetails = {
          error: { message: failure.message, kind: failure.kind, ...(failure.traceback ? { traceback: failure.traceback } : {}) },
          logs: failure.logs,
          startedAt,
          finishedAt: new Date().toISOString(),
        };
        throw ApplicationFailure.create({ message: failure.message, type: nodeFailedType, nonRetryable: !failure.retryable, details: [details] });
      }
    },

    async finalizeCase(input) {
      return repo.finalize(input);
    },
  };
}
