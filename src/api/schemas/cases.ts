import { z } from 'zod';
import { caseStatuses, nodeClocks } from '../../domain/cases.js';
import { errorBodySchema, nextCursorSchema, pageQueryFields, uuid } from './common.js';

const resultEntrySchema = z.object({ value: z.unknown(), type: z.string(), displayName: z.string() });
export const resultsBodySchema = z.object({
  results: z
    .record(z.string(), resultEntrySchema)
    .meta({ description: "Keyed by the output variable's variable_name" }),
  status: z.enum(caseStatuses),
});
export const notFinishedSchema = z
  .object({
    statusCode: z.literal(202),
    message: z.string(),
    timestamp: z.string(),
    path: z.string(),
    errorCode: z.literal(''),
  })
  .meta({ description: 'The case has not finished: no results yet' });

export const nodeDataSchema = z.object({
  node_id: z.string(),
  node_name: z.string(),
  handler_class: z.string(),
  status: z.enum(['pending', 'running', 'completed', 'failed', 'skipped', 'cancelled', 'not_executed']),
  inputs: z.record(z.string(), z.unknown()).nullable(),
  outputs: z.record(z.string(), z.unknown()).nullable(),
  logs: z.array(z.object({ level: z.string(), message: z.string(), at: z.string() })),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
  clock: z
    .enum(nodeClocks)
    .nullable()
    .meta({
      description:
        'Where started_at / finished_at come from: activity (the worker’s clock around the node’s code), workflow ' +
        '(Temporal’s workflow clock), upstream (the end of the latest upstream node, which the workflow clock was behind). ' +
        'Null for a node that never started.',
    }),
  attempts: z.number(),
  usage: z
    .object({ prompt_tokens: z.number(), completion_tokens: z.number(), total_tokens: z.number() })
    .nullable()
    .meta({ description: 'LLM tokens the node consumed over all its attempts (llm_agent nodes); null otherwise' }),
  error: z.object({ message: z.string(), kind: z.string().optional(), traceback: z.string().optional() }).nullable(),
  child_case_id: z.string().nullable().meta({
    description: 'A call_workflow node: the sub-workflow case it started (read it like any case); null otherwise',
  }),
});
export const auditSchema = z.object({
  caseId: z.string(),
  status: z.enum(caseStatuses),
  nb_nodes: z.number(),
  executed_nodes: z
    .array(z.string())
    .meta({ description: 'Nodes that ran (completed or failed), in the order they finished' }),
  nb_executed_nodes: z.number(),
  running_node: z.string().meta({ description: 'Empty when none is running' }),
  next_node_to_execute: z.string().meta({ description: 'Empty when none is queued' }),
  remaining_nodes_to_execute: z.array(z.string()),
  failed_nodes: z.array(z.string()),
  nb_failed_nodes: z.number(),
  audit: z.object({
    nodes_execution_data: z.record(z.string(), nodeDataSchema).meta({ description: 'Keyed by node id' }),
  }),
});
export const statusSchema = z.object({
  caseId: z.string(),
  status: z.enum(caseStatuses),
  workflowId: z.string(),
  workflowVersionId: z.string(),
  workflowVersionNumber: z.number(),
  title: z.string().nullable(),
  source: z.string(),
  createdAt: z.string(),
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
  currentNode: z.object({ id: z.string(), name: z.string() }).nullable(),
  runningNodes: z.array(z.string()),
  error: z.object({ message: z.string(), nodeId: z.string().optional() }).nullable(),
  temporalUiUrl: z.string().nullable().meta({ description: "The run's page in the Temporal Web UI" }),
  parentCase: z
    .object({ caseId: z.string(), nodeId: z.string() })
    .nullable()
    .meta({ description: 'A sub-workflow case: the case and call_workflow node that started it; null otherwise' }),
});
export const executedSchema = z.object({
  caseId: z.string(),
  status: z.enum(caseStatuses),
  workflowVersionId: z.string(),
  workflowVersionNumber: z.number(),
  temporalUiUrl: z.string().nullable(),
});

export const caseErrors = {
  400: { description: 'Invalid body or id (metadata.fields)', schema: errorBodySchema },
  401: { description: 'Missing, invalid or expired key', schema: errorBodySchema },
  403: { description: 'The key lacks the case permission in the workspace', schema: errorBodySchema },
  404: { description: 'Unknown case (or one of another organization)', schema: errorBodySchema },
};

export const initiatedSchema = z.object({
  caseId: z.string(),
  workflowVersionId: z.string(),
  workflowVersionNumber: z.number(),
  status: z.enum(caseStatuses),
});
export const cancelledSchema = z.object({ caseId: z.string(), status: z.enum(caseStatuses) });

/** The deprecated job paths answer the case bodies with the case id also as jobExecutionId. */
export const jobInitiatedSchema = z.object({ jobExecutionId: z.string() });
export const jobExecutedSchema = executedSchema.extend({ jobExecutionId: z.string() });
export const jobStatusSchema = statusSchema.extend({ jobExecutionId: z.string() });

/** The audit record of the deprecated job API, which the case API serves too. */
export type JobAudit = z.infer<typeof auditSchema>;

const isoTimeMessage = 'an ISO 8601 date-time such as 2026-01-31T09:00:00Z';
/** RFC 3339 (the document's `date-time`): seconds required, which zod's own check leaves optional. */
const isoTime = z.iso.datetime({ offset: true, message: isoTimeMessage }).regex(/T\d{2}:\d{2}:\d{2}/, isoTimeMessage);

export const caseListQuery = z
  .object({
    workspaceId: uuid.optional().meta({ description: 'Only this workspace' }),
    workflowId: uuid.optional().meta({ description: 'Only cases of this workflow' }),
    status: z.enum(caseStatuses).optional(),
    from: isoTime.optional().meta({ description: 'Created at or after this time' }),
    to: isoTime.optional().meta({ description: 'Created before this time' }),
    ...pageQueryFields,
  })
  .refine((q) => q.from === undefined || q.to === undefined || Date.parse(q.from) < Date.parse(q.to), {
    path: ['to'],
    message: 'must be after from',
  });

export const caseStatsQuery = z
  .object({
    workspaceId: uuid.optional().meta({ description: 'Only this workspace' }),
    workflowId: uuid.optional().meta({ description: 'Only this workflow' }),
    from: isoTime.optional().meta({ description: 'Cases created at or after this time; default: a day before to' }),
    to: isoTime
      .optional()
      .meta({ description: 'Cases created before this time; default: now. At most 31 days after from' }),
  })
  .meta({ description: 'A creation-time window of at most 31 days' });

export const caseStatsSchema = z.object({
  from: z.string().meta({ description: 'The window used (inclusive)' }),
  to: z.string().meta({ description: 'The window used (exclusive)' }),
  workflows: z.array(
    z.object({
      workflowId: z.string(),
      workspaceId: z.string(),
      cases: z.number().int().meta({ description: 'Cases created in the window' }),
      byStatus: z.partialRecord(z.enum(caseStatuses), z.number().int()).meta({ description: 'Those cases by status' }),
      runSeconds: z
        .object({ count: z.number().int(), mean: z.number(), max: z.number() })
        .nullable()
        .meta({ description: 'Execute → end, over the cases that ran to an end; null when none did' }),
    }),
  ),
});

export const caseListItemSchema = z.object({
  caseId: z.string(),
  workspaceId: z.string(),
  workflowId: z.string(),
  workflowVersionId: z.string(),
  workflowVersionNumber: z.number(),
  title: z.string().nullable(),
  source: z.string(),
  status: z.enum(caseStatuses),
  error: z.object({ message: z.string(), nodeId: z.string().optional() }).nullable(),
  createdAt: z.string(),
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
});

export const caseListSchema = z.object({
  cases: z.array(caseListItemSchema).meta({ description: 'Newest first' }),
  nextCursor: nextCursorSchema,
});
