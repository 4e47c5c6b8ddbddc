import type { z } from 'zod';
import { childKind, type Zod } from './kind.js';

/**
 * `process`: the callee, a workflow of the same workspace, and optionally the version number to pin;
 * without one the callee's latest active version runs (resolved when the child case starts).
 */
function processSchema(zod: Zod) {
  return zod.object({ workflow_id: zod.uuid(), version_number: zod.number().int().min(1).optional() }).strict();
}

/** What a call_workflow node's `process` holds. */
export type CallWorkflowProcess = z.output<ReturnType<typeof processSchema>>;

/**
 * `call_workflow`: runs another workflow of the workspace as a child case (its own case row and
 * Temporal child run `case-<childCaseId>`); the node's inputs are the child's case inputs, the
 * child's results (by variable_name) the node's outputs. A child that does not complete fails the node.
 */
export const callWorkflowKind = childKind({
  handlerClass: 'call_workflow',
  nodeType: 'subworkflow',
  describe:
    'Sub-workflow: process { workflow_id, version_number? }; runs that workflow of the workspace as a child case; its results are the outputs.',
  process: processSchema,
});
