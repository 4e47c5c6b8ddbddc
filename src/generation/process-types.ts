import type { ProcessRef } from '../domain/generation/run.js';
import type { Tool } from './toolbox.js';

/**
 * A discovered process as a generation run carries it (types only: the
 * generation run's contract names it). Built at start by process-source.ts,
 * bounded in size.
 */

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
