import type { z } from 'zod';
import { jobPayloadSchema, resultsSchema } from '../../domain/input-schema.js';
import type { WorkflowVersionSnapshot } from '../../domain/graph.js';
import type { Page } from '../../domain/page.js';
import type { WorkflowListItem, WorkflowRecord, WorkflowWithVersion } from '../../domain/workflow-records.js';
import type { VersionSummary, WorkflowDetails, WorkflowStatus } from '../../definitions/workflow-service.js';
import type {
  createdSchema,
  deprecatedDetailsSchema,
  detailsSchema,
  statusResultSchema,
  updatedSchema,
  versionSummarySchema,
  workflowListSchema,
} from '../schemas/workflows.js';

function summary(version: VersionSummary): z.infer<typeof versionSummarySchema> {
  return {
    workflowVersionId: version.id,
    workflowVersionNumber: version.versionNumber,
    status: version.status,
    name: version.name,
    description: version.description,
    createdBy: version.createdBy,
    createdAt: version.createdAt,
  };
}

export function createdView({ workflow, version }: WorkflowWithVersion): z.infer<typeof createdSchema> {
  return {
    workflowId: workflow.id,
    entityId: workflow.entityId,
    workflowVersionId: version.id,
    builderType: workflow.builderType,
  };
}

export function detailsView(details: WorkflowDetails): z.infer<typeof detailsSchema> {
  const { workflow, version, active } = details;
  return {
    workflowId: workflow.id,
    entityId: workflow.entityId,
    workspaceId: workflow.workspaceId,
    name: workflow.name,
    description: workflow.description,
    builderType: workflow.builderType,
    activeStatus: active ? 'active' : 'inactive',
    orgUnitIds: workflow.orgUnitIds,
    maxConcurrentCases: workflow.maxConcurrentCases,
    createdAt: workflow.createdAt,
    updatedAt: workflow.updatedAt,
    version: summary(version),
    latestVersion: summary(details.latest),
    activeVersion: active ? summary(active) : null,
    nodes: version.graph.nodes,
    edges: version.graph.edges,
    jobPayloadSchema: jobPayloadSchema(version.graph),
    resultsSchema: resultsSchema(version.graph),
    versions: details.versions.map(summary),
    nextVersionsCursor: details.nextVersionsCursor,
  };
}

export function updatedView({ workflow, version }: WorkflowWithVersion): z.infer<typeof updatedSchema> {
  return {
    workflowId: workflow.id,
    entityId: workflow.entityId,
    workflowVersionId: version.id,
    workflowVersionNumber: version.versionNumber,
    status: version.status,
  };
}

export function statusView({ workflowId, active }: WorkflowStatus): z.infer<typeof statusResultSchema> {
  return {
    workflowId,
    activeStatus: active ? 'active' : 'inactive',
    activeVersionId: active?.id ?? null,
    activeVersionNumber: active?.versionNumber ?? null,
  };
}

export function deprecatedDetailsView(
  workflow: WorkflowRecord,
  snapshot: WorkflowVersionSnapshot,
): z.infer<typeof deprecatedDetailsSchema> {
  return {
    workflowId: workflow.id,
    entityId: workflow.entityId,
    name: workflow.name,
    description: workflow.description,
    versionId: snapshot.versionId,
    versionNumber: snapshot.versionNumber,
    activeStatus: snapshot.activeStatus,
    blueprint: snapshot.graph,
    jobPayloadSchema: jobPayloadSchema(snapshot.graph),
  };
}

export function workflowListView(page: Page<WorkflowListItem>): z.infer<typeof workflowListSchema> {
  return {
    workflows: page.items.map((w) => ({
      workflowId: w.id,
      entityId: w.entityId,
      workspaceId: w.workspaceId,
      name: w.name,
      description: w.description,
      activeStatus: w.activeVersionNumber === null ? 'inactive' : 'active',
      activeVersionNumber: w.activeVersionNumber,
      latestVersionNumber: w.latestVersionNumber,
      createdAt: w.createdAt,
      updatedAt: w.updatedAt,
    })),
    nextCursor: page.nextCursor,
  };
}
