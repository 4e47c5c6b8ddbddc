import type { WorkflowGraph } from './graph.js';

/*
 * The records of caseflow's workflows (definitions) and their versions, as the
 * store keeps them and the services return them.
 */

export type VersionStatus = 'active' | 'inactive';

/** How a workflow was built: the contract allows SERVICE_V1 or SERVICE_V2; this service builds V2. */
export type BuilderType = 'SERVICE_V1' | 'SERVICE_V2';

export interface WorkflowRecord {
  id: string;
  entityId: string;
  organizationId: string;
  workspaceId: string;
  name: string;
  description: string | null;
  builderType: BuilderType;
  createdBy: string;
  createdAt: string;
  updatedAt: string;
  orgUnitIds: string[];
  /** Cases of this workflow running at once (docs/concurrency.md); null: only the organization's cap. */
  maxConcurrentCases: number | null;
}

export interface WorkflowVersionRecord {
  id: string;
  workflowId: string;
  versionNumber: number;
  status: VersionStatus;
  name: string;
  description: string | null;
  graph: WorkflowGraph;
  createdBy: string;
  createdAt: string;
}

export interface WorkflowWithVersion {
  workflow: WorkflowRecord;
  version: WorkflowVersionRecord;
}

/** A workflow as the list shows it: its record and the numbers of its latest and active versions. */
export interface WorkflowListItem extends WorkflowRecord {
  latestVersionNumber: number;
  /** null when no version is active. */
  activeVersionNumber: number | null;
}

export interface VersionPin {
  versionId?: string;
  versionNumber?: number;
}
