import type { CaseRunInput } from '../../domain/cases.js';
import type { RunTags } from './search-attributes.js';

/**
 * What a call_workflow node asks of the cases area (through the startChildCase activity), and what
 * it gets back to start the child run. Shared by the service, the activity and the workflow (types only).
 */
export interface ChildCaseRequest {
  parent: {
    caseId: string;
    organizationId: string;
    workspaceId: string;
    nodeId: string;
    /** The parent's own depth (CaseRunInput.callDepth): the child runs one deeper. */
    callDepth: number;
  };
  /** Chosen by the parent's run (deterministic there), so a retried start finds the row it wrote. */
  childCaseId: string;
  /** The node's `process` as saved: { workflow_id, version_number? }. */
  process: Record<string, unknown>;
  /** The node's resolved inputs: the child's case inputs, validated like an execute's. */
  inputs: Record<string, unknown>;
  /** What is left of the parent's deadline: the child's own deadline is at most this. */
  remainingMs: number;
}

/** The child's run as the parent starts it: its input and how the Temporal UI shows and tags it. */
export interface ChildCaseStart {
  input: CaseRunInput;
  summary: string;
  details: string;
  /** Absent when the namespace lacks caseflow's search attributes. */
  tags?: RunTags;
}

/** A child whose run never started (the parent ended, or the start failed): how its row ends. */
export interface UnstartedChildCase {
  childCaseId: string;
  status: 'CANCELLED' | 'FAILED';
  message: string;
}
