import { z } from 'zod';
import { variableSchemaSchema } from './variables.js';

/**
 * The workflow graph as the API accepts and stores it (snake_case, as the
 * contract says). Field names the contract leaves open are ours:
 * `handler_id` / `handler_version_id` (the catalog entry a node runs, e.g. a
 * code node and one of its versions), `variable_mappings` (input variable id →
 * an upstream node's output variable), `fixed_values` (input variable id →
 * constant) and `execution` (per-node timeout and retries).
 */
export const routeSchema = z.object({
  id: z.string().min(1),
  name: z.string().min(1).max(255),
  description: z.string().max(2048).optional(),
});

export const variableMappingSchema = z.object({
  from_node_id: z.string().min(1),
  from_variable_id: z.string().min(1),
});

export const nodeExecutionSchema = z.object({
  /** Wall-clock limit of one attempt. */
  timeout_ms: z.number().int().min(100).max(3_600_000).optional(),
  /** Attempts in all, the first included. */
  max_attempts: z.number().int().min(1).max(20).optional(),
});

export const nodeSchema = z.object({
  id: z.uuid(),
  name: z.string().min(1).max(255),
  type: z.string().min(1).max(64),
  description: z.string().max(2048).optional(),
  handler_class: z.string().min(1).max(128).optional(),
  handler_id: z.string().optional(),
  handler_version_id: z.string().optional(),
  input_schema: variableSchemaSchema.optional(),
  output_schema: variableSchemaSchema.optional(),
  process: z.record(z.string(), z.unknown()).optional(),
  routes: z.record(z.string(), routeSchema).optional(),
  properties: z.array(z.string()).optional(),
  variable_mappings: z.record(z.string(), variableMappingSchema).optional(),
  fixed_values: z.record(z.string(), z.unknown()).optional(),
  execution: nodeExecutionSchema.optional(),
});
export type WorkflowNode = z.infer<typeof nodeSchema>;

export const edgeSchema = z.object({
  id: z.string().min(1),
  from_node_id: z.string().min(1),
  to_node_id: z.string().min(1),
  route_id: z.string().optional(),
  route_complement: z.boolean().optional(),
});
export type WorkflowEdge = z.infer<typeof edgeSchema>;

export const graphSchema = z.object({
  nodes: z.record(z.string(), nodeSchema),
  edges: z.record(z.string(), edgeSchema),
});
export type WorkflowGraph = z.infer<typeof graphSchema>;

/**
 * One version of a workflow as a case runs it: the fields that never change once the
 * version is saved (a change cuts a new version). Cases keep the version they started
 * on, so later updates never change a running case.
 */
export interface RunnableVersion {
  workflowId: string;
  entityId: string;
  versionId: string;
  versionNumber: number;
  organizationId: string;
  workspaceId: string;
  name: string;
  graph: WorkflowGraph;
}

/** A runnable version with its status as read: the one field activating and deactivating change in place. */
export interface WorkflowVersionSnapshot extends RunnableVersion {
  activeStatus: 'active' | 'inactive';
}
