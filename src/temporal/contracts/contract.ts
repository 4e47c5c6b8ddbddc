import type { Workflow } from '@temporalio/common';

/**
 * A workflow's type name bound to its function's signature. Services start it
 * and workflows start it as a child through the contract, so a wrong argument
 * is a compile error; the workflow function itself is declared with
 * `WorkflowOf<typeof contract>`, so the two cannot drift apart.
 */
export interface WorkflowContract<W extends Workflow> {
  readonly workflowType: string;
  /** Never set: carries the signature for the type checker only. */
  readonly signature?: W;
}

export function workflowContract<W extends Workflow>(workflowType: string): WorkflowContract<W> {
  return { workflowType };
}

/** The function type a contract's workflow has. */
export type WorkflowOf<C> = C extends WorkflowContract<infer W> ? W : never;
