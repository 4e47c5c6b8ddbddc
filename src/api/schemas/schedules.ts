import { z } from 'zod';
import { caseStatuses } from '../../domain/cases.js';
import { overlapPolicies } from '../../domain/schedules.js';
import { errorBodySchema, nextCursorSchema, pageQueryFields, uuid } from './common.js';

export const scheduleParams = z.object({ scheduleId: uuid.meta({ description: 'The scheduleId' }) });

export const scheduleListQuery = z.object({
  workspaceId: uuid.optional().meta({ description: 'Only this workspace' }),
  workflowId: uuid.optional().meta({ description: 'Only schedules of this workflow' }),
  ...pageQueryFields,
});

/** A schedule as stored: what it fires and when. */
export const scheduleSchema = z.object({
  scheduleId: z.string(),
  workflowId: z.string(),
  workspaceId: z.string(),
  workflowVersionId: z.string().nullable().meta({ description: 'The pinned version; null runs the latest active one' }),
  title: z.string().nullable(),
  cron: z.string().nullable(),
  intervalSeconds: z.number().nullable(),
  offsetSeconds: z.number().nullable(),
  timeZone: z.string(),
  startAt: z.string().nullable(),
  endAt: z.string().nullable(),
  inputs: z.record(z.string(), z.unknown()),
  callbackUrl: z.string().nullable(),
  overlap: z.enum(overlapPolicies),
  catchupWindowSeconds: z.number(),
  paused: z.boolean(),
  temporalScheduleId: z.string().meta({ description: "Its id on the Temporal UI's Schedules page" }),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const firingSchema = z.object({
  firingId: z.string(),
  scheduledAt: z.string().meta({ description: 'The time the firing was for (a backfill names a past time)' }),
  firedAt: z.string(),
  status: z
    .enum(['started', 'failed'])
    .meta({ description: 'started: a case was created; failed: none was (see error)' }),
  caseId: z.string().nullable(),
  caseStatus: z.enum(caseStatuses).nullable(),
  error: z
    .string()
    .nullable()
    .meta({ description: 'Why no case was created (workflow inactive, inputs no longer valid…)' }),
  temporalWorkflowId: z.string(),
});

/** One schedule with what Temporal says of it now and its latest firings. */
export const scheduleDetailsSchema = scheduleSchema.extend({
  inEngine: z.boolean().meta({
    description:
      'false when Temporal lacks the schedule (a crash between the store and Temporal, or Temporal unreachable): PATCH re-creates it',
  }),
  note: z.string().nullable().meta({ description: "Temporal's note on the schedule (why it was paused…)" }),
  nextRunTimes: z.array(z.string()),
  runningFirings: z.number(),
  skippedOverlap: z.number().meta({ description: 'Firings skipped because the previous case was still running' }),
  missedCatchupWindow: z.number().meta({ description: 'Firings missed beyond the catch-up window' }),
  recentFirings: z.array(firingSchema).meta({ description: 'The latest 20 firings, newest first' }),
});

export const scheduleListSchema = z.object({ items: z.array(scheduleSchema), nextCursor: nextCursorSchema });

export const backfillStartedSchema = z.object({
  scheduleId: z.string(),
  firings: z.number().meta({ description: 'Firings the range holds; they run one after another' }),
});

export const scheduleErrors = {
  400: { description: 'Invalid body, id or query (metadata.fields names each bad field)', schema: errorBodySchema },
  401: { description: 'Missing, invalid or expired key', schema: errorBodySchema },
  403: { description: 'The key lacks the permission in the workspace', schema: errorBodySchema },
  404: { description: 'Unknown schedule or workflow (or one of another organization)', schema: errorBodySchema },
  503: { description: 'The workflow engine is unreachable; nothing changed (Retry-After)', schema: errorBodySchema },
};
