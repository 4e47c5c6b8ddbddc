import { z } from 'zod';
import { memberRoles, taskStatuses } from '../../domain/human-tasks.js';
import { isoTime } from '../../domain/ids.js';
import { variableSchemaSchema } from '../../domain/variables.js';
import { errorBodySchema, nextCursorSchema, pageQueryFields, uuid } from './common.js';

const assigneeSchema = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('user'), user_id: uuid }).strict(),
    z.object({ type: z.literal('role'), role: z.enum(memberRoles) }).strict(),
    z.object({ type: z.literal('workspace') }).strict(),
  ])
  .meta({
    description:
      "One user of the organization, the members with a role, or anyone with Case: Read in the task's workspace",
  });

export const taskListQuery = z.object({
  workspaceId: uuid.optional().meta({ description: 'Only this workspace' }),
  status: z.enum(taskStatuses).optional(),
  assignee: z
    .union([z.literal('me'), uuid])
    .optional()
    .meta({
      description: "Tasks a user may take (assigned to them or their role, or claimed by them); `me` is the key's user",
    }),
  caseId: uuid.optional(),
  workflowId: uuid.optional(),
  dueBefore: isoTime.optional().meta({ description: 'Only tasks due before this time' }),
  sort: z
    .enum(['newest', 'soonest_due'])
    .default('newest')
    .meta({ description: 'newest (default) or soonest_due (tasks without a due time last)' }),
  ...pageQueryFields,
});

const historySchema = z.object({
  at: z.string(),
  actorUserId: z.string().nullable().meta({ description: 'null for the case run and completion links' }),
  action: z
    .string()
    .meta({ description: 'opened, claimed, released, reassigned, escalated, completed, expired, cancelled' }),
  details: z.record(z.string(), z.unknown()),
});

export const taskSummarySchema = z.object({
  taskId: z.string(),
  status: z.enum(taskStatuses),
  title: z.string(),
  workspaceId: z.string(),
  caseId: z.string(),
  workflowId: z.string(),
  nodeId: z.string(),
  nodeName: z.string(),
  assignee: assigneeSchema,
  claimedBy: z.string().nullable(),
  dueAt: z.string().nullable(),
  escalated: z.boolean(),
  createdAt: z.string(),
  decidedAt: z.string().nullable(),
});

export const taskSchema = taskSummarySchema.extend({
  instructions: z.string().meta({ description: "Rendered with the node's input values" }),
  form: variableSchemaSchema.meta({
    description: "The form: the node's output_schema (a route's bool field decides it)",
  }),
  outputs: z.record(z.string(), z.unknown()).nullable().meta({ description: 'The completed form' }),
  decidedBy: z.string().nullable(),
  decidedVia: z.enum(['api', 'link']).nullable(),
  history: z.array(historySchema),
});

export const taskListSchema = z.object({ items: z.array(taskSummarySchema), nextCursor: nextCursorSchema });

export const completeBodySchema = z.object({
  outputs: z.record(z.string(), z.unknown()).meta({ description: 'The form values keyed by variable_name' }),
});

export const taskLinkSchema = z.object({
  url: z.string().meta({ description: 'The completion page; single use, shown once' }),
  expiresAt: z.string(),
});

export const reassignBodySchema = z.object({ assignee: assigneeSchema });

export const taskStatsQuery = z
  .object({
    workspaceId: uuid.optional().meta({ description: 'Only this workspace' }),
    from: isoTime.optional().meta({ description: 'Tasks closed at or after this time; default: a day before to' }),
    to: isoTime
      .optional()
      .meta({ description: 'Tasks closed before this time; default: now. At most 31 days after from' }),
  })
  .meta({ description: 'A window of closing times of at most 31 days' });

const count = z.number().int();

export const taskStatsSchema = z.object({
  from: z.string().meta({ description: 'The window used (inclusive)' }),
  to: z.string().meta({ description: 'The window used (exclusive)' }),
  workspaces: z.array(
    z.object({
      workspaceId: z.string(),
      open: count.meta({ description: 'Waiting for a decision now, unclaimed (whatever the window)' }),
      claimed: count.meta({ description: 'Waiting for a decision now, claimed (whatever the window)' }),
      completed: count.meta({ description: 'Completed in the window' }),
      expired: count.meta({ description: 'Past their due time (or the case’s maximum wait) in the window' }),
      cancelled: count.meta({ description: 'Cancelled with their case in the window' }),
      decisionSeconds: z
        .object({ count: count, mean: z.number(), max: z.number() })
        .nullable()
        .meta({ description: 'Opening → decision, over the tasks completed in the window; null when none was' }),
    }),
  ),
});

export const taskErrors = {
  400: { description: 'Invalid body, query or id (metadata.fields)', schema: errorBodySchema },
  401: { description: 'Missing, invalid or expired key', schema: errorBodySchema },
  403: {
    description: "The key lacks Case: Read in the task's workspace (or, to decide, Case: Full and is not the assignee)",
    schema: errorBodySchema,
  },
  404: { description: 'Unknown task (or one of another organization)', schema: errorBodySchema },
};

export const decisionConflict = {
  409: {
    description: 'The task is completed, expired or cancelled already, or claimed by another user',
    schema: errorBodySchema,
  },
};
