import { z } from 'zod';
import { caseStatuses, nodeClocks, rerunBatchStatuses, rerunFroms, rerunVersions } from '../../domain/cases.js';
import { errorBodySchema, nextCursorSchema, pageQueryFields, uuid } from './common.js';
import { isoTime } from '../../domain/ids.js';

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
  status: z.enum(['pending', 'running', 'waiting', 'completed', 'failed', 'skipped', 'cancelled', 'not_executed']),
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
  reused: z
    .object({ case_id: z.string(), node_id: z.string() })
    .nullable()
    .meta({
      description:
        'Set on a rerun’s node that did not run: it is completed with the outputs this node recorded in that case ' +
        '(a rerun from the failed node). Null otherwise',
    }),
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
  hookId: z
    .string()
    .nullable()
    .meta({ description: 'The webhook trigger whose delivery started the case (source api); null otherwise' }),
  createdAt: z.string(),
  queuedAt: z.string().nullable().meta({
    description:
      'When the case joined its queue: QUEUED while over a concurrency cap, since then (docs/concurrency.md); kept once it runs; null when it never waited',
  }),
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
  startAt: z
    .string()
    .nullable()
    .meta({ description: 'A delayed start: when the run begins (null when it began at execute); RUNNING until then' }),
  scheduleId: z
    .string()
    .nullable()
    .meta({ description: 'The schedule whose firing created the case (source scheduled)' }),
  currentNode: z.object({ id: z.string(), name: z.string() }).nullable(),
  runningNodes: z.array(z.string()),
  waitingTasks: z
    .array(z.object({ taskId: z.string(), nodeId: z.string(), title: z.string(), dueAt: z.string().nullable() }))
    .meta({ description: 'The human tasks the case waits on (GET /api/v1/tasks/{taskId})' }),
  error: z.object({ message: z.string(), nodeId: z.string().optional() }).nullable(),
  temporalUiUrl: z.string().nullable().meta({ description: "The run's page in the Temporal Web UI" }),
  rerunOf: z.string().nullable().meta({ description: 'The case this one reruns; null for a case started on its own' }),
  rerunFrom: z
    .enum(rerunFroms)
    .nullable()
    .meta({ description: 'Where this rerun started; null unless rerunOf is set' }),
  reruns: z.array(z.string()).meta({ description: 'The cases that rerun this one, oldest first' }),
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
  startAt: z.string().nullable().meta({ description: 'A delayed start: when the run begins' }),
  temporalUiUrl: z.string().nullable(),
});
export const rerunStartedSchema = executedSchema.extend({
  rerunOf: z.string().meta({ description: 'The case rerun' }),
  rerunFrom: z.enum(rerunFroms),
});

export const caseErrors = {
  400: { description: 'Invalid body or id (metadata.fields)', schema: errorBodySchema },
  401: { description: 'Missing, invalid or expired key', schema: errorBodySchema },
  403: { description: 'The key lacks the case permission in the workspace', schema: errorBodySchema },
  404: { description: 'Unknown case (or one of another organization)', schema: errorBodySchema },
};

/** The answer of initiate and execute over the organization's intake rate (off by default). */
export const intakeLimited = {
  429: {
    description:
      "Over the organization's intake rate (cases.intakeRateLimit: perOrganization requests per windowMs, each of initiate and execute; off by default); Retry-After, RateLimit, RateLimit-Policy headers",
    schema: errorBodySchema,
  },
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

/** The case list's filters: what GET /api/v1/case takes and what a bulk rerun matches cases by. */
const caseFilterFields = {
  workspaceId: uuid.optional().meta({ description: 'Only this workspace' }),
  workflowId: uuid.optional().meta({ description: 'Only cases of this workflow' }),
  status: z.enum(caseStatuses).optional(),
  from: isoTime.optional().meta({ description: 'Created at or after this time' }),
  to: isoTime.optional().meta({ description: 'Created before this time' }),
};
const fromBeforeTo: [(q: { from?: string; to?: string }) => boolean, { path: string[]; message: string }] = [
  (q) => q.from === undefined || q.to === undefined || Date.parse(q.from) < Date.parse(q.to),
  { path: ['to'], message: 'must be after from' },
];

export const caseListQuery = z.object({ ...caseFilterFields, ...pageQueryFields }).refine(...fromBeforeTo);

export const rerunBatchBodySchema = z.object({
  filter: z
    .object(caseFilterFields)
    .refine(...fromBeforeTo)
    .default({})
    .meta({
      description:
        'The filters of GET /api/v1/case: the cases they match when the batch is created (those created before it) are rerun',
    }),
  from: z.enum(rerunFroms).meta({
    description:
      'How each case reruns (as POST /api/v1/case/{caseId}/rerun): a case `failed` does not apply to is skipped',
  }),
  version: z.enum(rerunVersions).default('original'),
});

const rerunItemSchema = z.object({ caseId: z.string(), reason: z.string() });
export const rerunBatchSchema = z.object({
  batchId: z.string(),
  status: z.enum(rerunBatchStatuses).meta({ description: 'RUNNING until every matched case is gone through' }),
  from: z.enum(rerunFroms),
  version: z.enum(rerunVersions),
  filter: z.object({
    workspaceId: z.string().optional(),
    workflowId: z.string().optional(),
    status: z.enum(caseStatuses).optional(),
    from: z.string().optional(),
    to: z.string().meta({ description: 'The end of the range: at most the batch’s creation' }),
  }),
  matched: z.number().int().meta({ description: 'Cases the filter matched at creation: the batch goes through these' }),
  started: z.number().int().meta({ description: 'Reruns started' }),
  skipped: z.number().int().meta({ description: 'Cases not rerun because the rerun was refused (see skippedCases)' }),
  failed: z.number().int().meta({ description: 'Cases whose rerun could not be started (see failedCases)' }),
  pending: z.number().int().meta({ description: 'Matched cases not gone through yet' }),
  skippedCases: z.array(rerunItemSchema).meta({ description: 'The first 100 skipped cases with the reason' }),
  failedCases: z.array(rerunItemSchema).meta({ description: 'The first 100 failed cases with the reason' }),
  error: z.string().nullable().meta({ description: 'Why the batch ended FAILED' }),
  createdAt: z.string(),
  finishedAt: z.string().nullable(),
  temporalWorkflowId: z.string().meta({ description: 'The batch’s workflow in Temporal (case-rerun-<batchId>)' }),
  temporalUiUrl: z.string().nullable(),
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
