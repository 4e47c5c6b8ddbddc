import type { Tool } from './toolbox.js';

/**
 * A discovered process as a generation run carries it (types only: the
 * generation-run workflow bundle imports this module). Built at start by
 * process-source.ts, bounded in size.
 */

/** Which process and which state of it a run built from; recorded in the run record. */
export interface ProcessRef {
  processId: string;
  /** The snapshot asked for; null: the process's current state at the start. */
  processVersionId: string | null;
  versionNumber: number | null;
  name: string;
  /** The process's updatedAt as of the state used (a snapshot's is the process's at snapshot time). */
  processUpdatedAt: string;
}

export interface SourceItem {
  id: string;
  text: string;
}

export interface SourceStep {
  id: string;
  name: string;
  description: string | null;
  stepType: string | null;
  stepOrder: number | null;
  branchId: string | null;
  branchLabel: string | null;
  branchSourceStepId: string | null;
  branchRejoinStepId: string | null;
  branchOrder: number | null;
  inputs: string[];
  outputs: string[];
  integrations: SourceItem[];
  rules: string[];
}

export interface SourceProcess {
  name: string;
  description: string | null;
  inputs: string[];
  outputs: string[];
  rules: string[];
  /** Process-level and every step's integrations, merged as the discovery read does. */
  integrations: SourceItem[];
  steps: SourceStep[];
  edges: Array<{ source: string; target: string; label: string | null }>;
}

/**
 * A process integration the target workspace has a live connection for: a
 * step using it becomes an integration_action step whose action is fixed.
 */
export interface IntegrationBinding {
  /** The integration's name, lower case with spacing folded: what a plan step's `integration` names. */
  key: string;
  /** The process's name for it. */
  name: string;
  /** The workspace's tool that carries it (workspace-tools.ts). */
  tool: Tool;
}

export interface ProcessSource {
  ref: ProcessRef;
  process: SourceProcess;
  bindings: IntegrationBinding[];
}
