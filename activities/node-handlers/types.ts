import type { NodeLog } from '../../src/domain/cases.js';
import type { WorkflowNode } from '../../src/domain/graph.js';

/** What a handler gets for one node of one case. */
export interface NodeRunContext {
  caseId: string;
  organizationId: string;
  workspaceId: string;
  node: WorkflowNode;
  /** Resolved by the engine (variable mappings, fixed values, parents' outputs), keyed by variable_name. */
  inputs: Record<string, unknown>;
  /** The case's validated inputs, keyed by variable_name. */
  caseInputs: Record<string, unknown>;
  /** 1 for the first attempt. */
  attempt: number;
}

export interface NodeRunResult {
  /** Keyed by the node's output variable_name; a route's bool output decides its branch. */
  outputs: Record<string, unknown>;
  logs: NodeLog[];
}

/**
 * One kind of node (`handler_class`). The engine resolves the inputs, calls
 * run, and records outputs and logs in the audit. A handler that fails throws
 * NodeFailure (with the logs gathered so far); anything else thrown is an
 * unexpected error and fails the node too. Handlers that are pure and
 * deterministic (no I/O, no clock) may be listed in pure.ts, and the workflow
 * then runs them inline without an activity.
 */
export interface NodeHandler {
  readonly handlerClass: string;
  run(context: NodeRunContext): Promise<NodeRunResult> | NodeRunResult;
}

export class NodeFailure extends Error {
  constructor(
    message: string,
    readonly kind: string,
    readonly logs: NodeLog[] = [],
    readonly traceback?: string,
    /** false when another attempt cannot help (bad configuration, invalid output). */
    readonly retryable = true,
  ) {
    super(message);
    this.name = 'NodeFailure';
  }
}
