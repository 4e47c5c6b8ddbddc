// Request and response shapes of the discovery endpoints; the document itself is src/discovery/process-schema.ts.
import { z } from 'zod';
import {
  customEdgeSchema,
  milestoneSchema,
  processContentSchema,
  processUpdateSchema,
  stepReadSchema,
  taggedItemSchema,
} from '../../domain/discovery-process.js';
import { uuid } from './common.js';

export const createProcessBody = processContentSchema.meta({
  description:
    'The process document. stepCount, branchCount, ids of the organization and workspace, and timestamps are the service’s: sent ones are ignored.',
});
export const updateProcessBody = processUpdateSchema.meta({
  description:
    'Any subset of the top-level fields; lists (steps, customEdges, …) are replaced wholesale; null clears a nullable field.',
});

export const workspaceHeaders = z.object({
  'x-workspace-id': uuid.meta({ description: 'Workspace that owns the process' }),
});
export const processParams = z.object({ processId: uuid.meta({ description: 'The process id (UUID)' }) });
export const readQuery = z.object({
  processVersionId: uuid
    .optional()
    .meta({ description: 'A snapshot of this process to read instead of its current state' }),
});
export const importQuery = z.object({
  bpmnProcessId: z
    .string()
    .min(1)
    .max(255)
    .optional()
    .meta({ description: 'Which BPMN process to import when the document has several with tasks' }),
});

export const discoveredProcessSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    status: z.string().nullable(),
    organizationId: z.string(),
    workspaceId: z.string(),
    stepCount: z.number().int().meta({ description: 'Number of steps' }),
    branchCount: z.number().int().meta({ description: 'Number of distinct branchIds among the steps' }),
    processOrigin: z.string().nullable(),
    parentProcessId: z.string().nullable(),
    steps: z.array(stepReadSchema),
    customEdges: z.array(customEdgeSchema),
    processInputs: z.array(taggedItemSchema),
    processOutputs: z.array(taggedItemSchema),
    processIntegrations: z.array(taggedItemSchema).meta({
      description: 'Process-level integrations merged with every step’s (steps in stepOrder), one per id and per name',
    }),
    processRules: z.array(taggedItemSchema),
    milestone: milestoneSchema.nullable(),
    createdAt: z.string(),
    updatedAt: z
      .string()
      .meta({ description: 'For a snapshot: when the process had last changed before it was taken' }),
    processVersionId: z.string().nullable().meta({ description: 'The snapshot read; null for the current state' }),
    versionNumber: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'The snapshot’s number (1, 2, …); null for the current state' }),
  })
  .meta({ id: 'DiscoveredProcess' });

export const snapshotSchema = z.object({
  processId: z.string(),
  processVersionId: z.string().meta({ description: 'Pass as processVersionId to the read' }),
  versionNumber: z.number().int(),
  createdAt: z.string(),
});

export const importResultSchema = z.object({
  process: discoveredProcessSchema,
  bpmnProcessId: z.string().meta({ description: 'The BPMN process imported' }),
  dropped: z.array(z.object({ element: z.string(), id: z.string().nullable(), name: z.string().nullable() })).meta({
    description:
      'BPMN elements not kept as a step, edge, branch, lane or data item (events, annotations, diagram layout, …)',
  }),
});

export const bpmnBody = z
  .string()
  .meta({ description: 'A BPMN 2.0 XML document (bpmn:definitions), as modelling tools export it. No DOCTYPE.' });
