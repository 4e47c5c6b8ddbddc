import { z } from 'zod';
import { atLeastOneOf } from '../../domain/at-least-one.js';
import { edgeSchema, nodeSchema } from '../../domain/graph.js';
import { payloadSchemaSchema } from '../../domain/input-schema.js';
import { nextCursorSchema, pageQueryFields, uuid, queryInt } from './common.js';

export const activeStatusSchema = z.enum(['active', 'inactive']);
export const nodesSchema = z
  .record(z.string(), nodeSchema)
  .meta({ description: "Map keyed by node id; each key must equal the node's id" });
export const edgesSchema = z.record(z.string(), edgeSchema).meta({
  description:
    "Map keyed by edge id; each key must equal the edge's id; from_node_id and to_node_id must name nodes in nodes",
});

/** A workflow's own concurrency cap; null (or absent at creation) leaves only the organization's. */
const maxConcurrentCases = z.number().int().min(1).max(100_000).nullable().meta({
  description:
    "Cases of this workflow running at once; more wait their turn (status QUEUED) as the organization's cap does. null: no cap of its own",
});

export const createWorkflowBody = z.object({
  name: z.string().trim().min(1).max(255),
  description: z.string().max(2048).optional(),
  activeStatus: activeStatusSchema.default('inactive'),
  nodes: nodesSchema.optional(),
  edges: edgesSchema.optional(),
  orgUnitIds: z
    .array(z.string().min(1).max(255))
    .max(100)
    .optional()
    .meta({ description: 'Best-effort tags, at most 100' }),
  maxConcurrentCases: maxConcurrentCases.optional(),
});

export const updateWorkflowBody = atLeastOneOf(
  z
    .object({
      name: z.string().trim().min(1).max(255),
      description: z.string().max(2048),
      activeStatus: activeStatusSchema.meta({
        description: "Status of the new version; defaults to the latest version's",
      }),
      nodes: nodesSchema.meta({ description: 'Replaces the nodes; omitted: carried over from the latest version' }),
      edges: edgesSchema.meta({ description: 'Replaces the edges; omitted: carried over from the latest version' }),
      maxConcurrentCases,
    })
    .partial(),
  ['name', 'description', 'activeStatus', 'nodes', 'edges', 'maxConcurrentCases'],
  'Send at least one of name, description, nodes, edges, activeStatus, maxConcurrentCases',
);

export const workflowStatusBody = z.object({
  workflowVersionId: uuid.optional(),
  workflowVersionNumber: z.number().int().min(1).optional(),
});

export const workspaceHeaders = z.object({
  'x-workspace-id': uuid.meta({ description: 'Workspace to create the workflow in' }),
});
export const workflowParams = z.object({
  workflowId: uuid.meta({ description: 'The workflowId (or the entityId) of the workflow' }),
});
export const versionQuery = z.object({
  version: queryInt({ min: 1 }).optional().meta({ description: 'A version number' }),
  workflowVersionId: uuid.optional().meta({ description: 'A version id; wins over version' }),
});
export const detailsQuery = versionQuery.extend({
  versionsLimit: queryInt({ min: 1, max: 200 })
    .default(50)
    .meta({ description: 'Versions listed per page (default 50, at most 200)' }),
  versionsCursor: queryInt({ min: 1 }).optional().meta({ description: 'nextVersionsCursor of the previous page' }),
});

export const versionSummarySchema = z.object({
  workflowVersionId: z.string(),
  workflowVersionNumber: z.number(),
  status: activeStatusSchema,
  name: z.string(),
  description: z.string().nullable(),
  createdBy: z.string(),
  createdAt: z.string(),
});

export const createdSchema = z.object({
  workflowId: z.string(),
  entityId: z.string().meta({ description: "The workflow's catalog entry id; pass it as referenceEntityId" }),
  workflowVersionId: z.string(),
  builderType: z.enum(['SERVICE_V1', 'SERVICE_V2']),
});

export const detailsSchema = z.object({
  workflowId: z.string(),
  entityId: z.string(),
  workspaceId: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  builderType: z.string(),
  activeStatus: activeStatusSchema.meta({ description: 'active when a version is active (what unpinned runs use)' }),
  orgUnitIds: z.array(z.string()),
  maxConcurrentCases: z
    .number()
    .nullable()
    .meta({ description: "Cases of this workflow running at once; null: only the organization's cap" }),
  createdAt: z.string(),
  updatedAt: z.string(),
  version: versionSummarySchema.meta({
    description: 'The version described (nodes, edges, schemas): the one asked for, or the latest',
  }),
  latestVersion: versionSummarySchema,
  activeVersion: versionSummarySchema.nullable(),
  nodes: nodesSchema,
  edges: edgesSchema,
  jobPayloadSchema: payloadSchemaSchema,
  resultsSchema: payloadSchemaSchema,
  versions: z
    .array(versionSummarySchema)
    .meta({ description: 'One page of versions, newest first (versionsLimit, versionsCursor)' }),
  nextVersionsCursor: z
    .number()
    .nullable()
    .meta({ description: 'Pass as versionsCursor for the next page; null on the last page' }),
});

export const updatedSchema = z.object({
  workflowId: z.string(),
  entityId: z.string(),
  workflowVersionId: z.string(),
  workflowVersionNumber: z.number(),
  status: activeStatusSchema,
});

export const statusResultSchema = z.object({
  workflowId: z.string(),
  activeStatus: activeStatusSchema,
  activeVersionId: z.string().nullable(),
  activeVersionNumber: z.number().nullable(),
});

export const deprecatedDetailsSchema = z.object({
  workflowId: z.string(),
  entityId: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  versionId: z.string(),
  versionNumber: z.number(),
  activeStatus: activeStatusSchema,
  blueprint: z.object({ nodes: nodesSchema, edges: edgesSchema }),
  jobPayloadSchema: payloadSchemaSchema,
});

export const workflowListQuery = z.object({
  workspaceId: uuid.optional().meta({ description: 'Only this workspace' }),
  status: activeStatusSchema
    .optional()
    .meta({ description: 'active: a version is active (unpinned runs work); inactive: none is' }),
  name: z.string().min(1).max(200).optional().meta({ description: 'Part of the name, any case' }),
  ...pageQueryFields,
});

export const workflowListItemSchema = z.object({
  workflowId: z.string(),
  entityId: z.string(),
  workspaceId: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  activeStatus: activeStatusSchema,
  activeVersionNumber: z.number().nullable(),
  latestVersionNumber: z.number(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const workflowListSchema = z.object({
  workflows: z.array(workflowListItemSchema).meta({ description: 'Newest first' }),
  nextCursor: nextCursorSchema,
});
