import { ApplicationFailure } from '@temporalio/activity';
import type { ChildCaseRequest, ChildCaseStart, UnstartedChildCase } from '../src/temporal/contracts/child-case.js';
import { DomainError } from '../src/errors.js';
import { nodeFailedType, type NodeFailureDetails } from './cases.js';
import type { ActivityDeps } from './deps.js';

export interface ChildCaseActivities {
  /** Writes a call_workflow node's child case and answers how to start its run; a refusal fails the node. */
  startChildCase(request: ChildCaseRequest): Promise<ChildCaseStart>;
  /** Ends a child case whose run never started. */
  endUnstartedChildCase(child: UnstartedChildCase): Promise<void>;
}

/** The node error kind of each refusal, as the audit shows it. */
function refusalKind(err: DomainError): string {
  if (err.errorCode === 'VALIDATION_ERROR') return 'input';
  if (err.errorCode === 'PAYLOAD_TOO_LARGE') return 'limit';
  return 'configuration';
}

/** The cases area's side of call_workflow nodes (src/cases/case-service.ts does the work). */
export function createChildCaseActivities(deps: ActivityDeps): ChildCaseActivities {
  const { cases } = deps.services;
  return {
    async startChildCase(request) {
      const startedAt = new Date().toISOString();
      try {
        return await cases.startChild(request);
      } catch (err) {
        // A refusal (unknown callee, no active version, inputs that do not fit, too deep) will not change on a
        // retry: it fails the node with its message. Anything else (the store away) is retried by Temporal.
        if (!(err instanceof DomainError) || err.errorCode === 'SERVICE_UNAVAILABLE') throw err;
        const details: NodeFailureDetails = {
          error: { message: err.message, kind: refusalKind(err) },
          logs: [],
          startedAt,
          finishedAt: new Date().toISOString(),
        };
        throw ApplicationFailure.create({
          message: err.message,
          type: nodeFailedType,
          nonRetryable: true,
          details: [details],
        });
      }
    },

    async endUnstartedChildCase(child) {
      await cases.endUnstartedChild(child);
    },
  };
}
