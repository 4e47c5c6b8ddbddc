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
      'Five-field cron expression (minute hour day-of-month month day-of-week) in timeZone, whose closest two firings (clock changes included) are at least schedules.minIntervalSeconds apart; or intervalSeconds',
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

type TimingChoice = { cron?: string; intervalSeconds?: number; offsetSeconds?: number | null };

const eitherCronOrInterval = 'send either cron or intervalSeconds';

/**
 * A schedule fires by cron or every intervalSeconds (which offsetSeconds shifts), never both. The parse
 * refuses a body breaking it, naming the field, and the document states it beside (`oneOf`, `anyOf`), so
 * clients and generated requests see the rule the route applies.
 */
const createTiming = {
  check: (body: TimingChoice, ctx: z.RefinementCtx): void => {
    if ((body.cron === undefined) === (body.intervalSeconds === undefined))
      ctx.addIssue({ code: 'custom', path: ['cron'], message: eitherCronOrInterval });
    else if (body.cron !== undefined && body.offsetSeconds !== undefined)
      ctx.addIssue({ code: 'custom', path: ['offsetSeconds'], message: 'goes with intervalSeconds only' });
  },
  document: {
    oneOf: [
      { required: ['cron'], properties: { intervalSeconds: false, offsetSeconds: false } },
      { required: ['intervalSeconds'], properties: { cron: false } },
    ],
  },
};

/** A PATCH sends one of them (replacing the other) or neither. */
const updateTiming = {
  check: (body: TimingChoice, ctx: z.RefinementCtx): void => {
    if (body.cron !== undefined && body.intervalSeconds !== undefined)
      ctx.addIssue({ code: 'custom', path: ['cron'], message: eitherCronOrInterval });
  },
  document: {
    anyOf: [{ properties: { intervalSeconds: false } }, { properties: { cron: false } }],
  },
};

export const createScheduleBodySchema = z
  .strictObject({
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
  })
  .superRefine(createTiming.check)
  .meta(createTiming.document);
export type CreateScheduleBody = z.infer<typeof createScheduleBodySchema>;

/** Every field optional; null clears an optional one. Sending cron or intervalSeconds replaces the other. */
export const updateScheduleBodySchema = z
  .strictObject({
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
  })
  .superRefine(updateTiming.check)
  .meta(updateTiming.document);
export type UpdateScheduleBody = z.infer<typeof updateScheduleBodySchema>;

export const backfillBodySchema = z.strictObject({
  startAt: isoTime.describe('Fires every time of the schedule from this time'),
  endAt: isoTime.describe('up to this time (included)'),
});
export type BackfillBody = z.infer<typeof backfillBodySchema>;
