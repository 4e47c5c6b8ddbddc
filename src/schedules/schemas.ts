import { z } from 'zod';
import { isoTime, uuid } from '../domain/ids.js';
import { overlapPolicies } from '../domain/schedules.js';

/** Schedule request bodies: the API validates them and documents them, the service takes them. */
const timingFields = {
  cron: z
    .string()
    .min(1)
    .max(255)
    .describe(
      'Five-field cron expression (minute hour day-of-month month day-of-week) in timeZone; or intervalSeconds',
    ),
  intervalSeconds: z
    .number()
    .int()
    .min(1)
    .describe('Fires every so many seconds (at least schedules.minIntervalSeconds); or cron'),
  offsetSeconds: z.number().int().min(0).describe('Shifts interval firings from the epoch-aligned grid'),
  timeZone: z.string().min(1).max(64).describe('IANA time zone of the cron expression, such as Europe/Paris'),
  startAt: isoTime.describe('No firing before this time'),
  endAt: isoTime.describe('No firing after this time'),
};

const fireFields = {
  title: z.string().max(255).describe("The cases' title"),
  workflowVersionId: uuid.describe('Pins a version; without it each firing runs the latest active version'),
  inputs: z
    .record(z.string(), z.unknown())
    .describe("The cases' inputs keyed by variable_name, checked as execute checks them"),
  callbackUrl: z
    .url({ protocol: /^https?$/ })
    .max(2048)
    .describe('POSTed { caseId, status, results, error? } when each case ends'),
  overlap: z
    .enum(overlapPolicies)
    .describe(
      'When a firing finds the previous case still running: skip it, buffer_one (run it after), allow_all, cancel_previous',
    ),
  catchupWindowSeconds: z
    .number()
    .int()
    .min(10)
    .describe('A firing missed while the engine was down still runs when at most this late (default 3600)'),
  paused: z.boolean().describe('Created or left paused'),
};

export const createScheduleBodySchema = z.strictObject({
  cron: timingFields.cron.optional(),
  intervalSeconds: timingFields.intervalSeconds.optional(),
  offsetSeconds: timingFields.offsetSeconds.optional(),
  timeZone: timingFields.timeZone.default('UTC'),
  startAt: timingFields.startAt.optional(),
  endAt: timingFields.endAt.optional(),
  title: fireFields.title.optional(),
  workflowVersionId: fireFields.workflowVersionId.optional(),
  inputs: fireFields.inputs.default({}),
  callbackUrl: fireFields.callbackUrl.optional(),
  overlap: fireFields.overlap.default('skip'),
  catchupWindowSeconds: fireFields.catchupWindowSeconds.default(3600),
  paused: fireFields.paused.default(false),
});
export type CreateScheduleBody = z.infer<typeof createScheduleBodySchema>;

/** Every field optional; null clears an optional one. Sending cron or intervalSeconds replaces the other. */
export const updateScheduleBodySchema = z.strictObject({
  cron: timingFields.cron.optional(),
  intervalSeconds: timingFields.intervalSeconds.optional(),
  offsetSeconds: timingFields.offsetSeconds.nullable().optional(),
  timeZone: timingFields.timeZone.optional(),
  startAt: timingFields.startAt.nullable().optional(),
  endAt: timingFields.endAt.nullable().optional(),
  title: fireFields.title.nullable().optional(),
  workflowVersionId: fireFields.workflowVersionId.nullable().optional(),
  inputs: fireFields.inputs.optional(),
  callbackUrl: fireFields.callbackUrl.nullable().optional(),
  overlap: fireFields.overlap.optional(),
  catchupWindowSeconds: fireFields.catchupWindowSeconds.optional(),
  paused: fireFields.paused.optional(),
});
export type UpdateScheduleBody = z.infer<typeof updateScheduleBodySchema>;

export const backfillBodySchema = z.strictObject({
  startAt: isoTime.describe('Fires every time of the schedule from this time'),
  endAt: isoTime.describe('up to this time (included)'),
});
export type BackfillBody = z.infer<typeof backfillBodySchema>;
