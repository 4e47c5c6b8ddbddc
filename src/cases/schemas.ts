import { z } from 'zod';
import { atLeastOneOf } from '../domain/at-least-one.js';
import { caseSources, rerunFroms, rerunVersions } from '../domain/cases.js';
import { isoTime } from '../domain/ids.js';

const workspaceId = z.regexes.uuid().source.slice(1, -1);
/** Comma-separated workspace UUIDs; blanks around commas and empty entries are ignored, at least one id. */
const workspaceList = new RegExp(`^[\\s,]*(${workspaceId})(\\s*,[\\s,]*(${workspaceId}))*[\\s,]*$`);

/** What a case is initiated and executed with: the service's inputs, validated by the API as request bodies. */
export const initiateBodySchema = atLeastOneOf(
  z.object({
    workflowId: z.string().min(1).max(255).optional(),
    referenceEntityId: z.uuid().optional().describe('Wins over workflowId when both are sent'),
    workflowVersionId: z.uuid().optional().describe('Pins a version; wins over workflowVersionNumber'),
    workflowVersionNumber: z.number().int().min(1).optional(),
    title: z.string().max(255).optional(),
    description: z.string().max(2048).optional(),
    refUserId: z.string().max(255).optional(),
    source: z.enum(caseSources).default('api'),
    webAppId: z.string().min(1).max(255).optional().describe('The published web app that launched the case'),
    workspaces: z
      .string()
      .max(4096)
      .regex(workspaceList, 'comma-separated workspace UUIDs expected')
      .optional()
      .describe('Comma-separated workspace ids; the workflow must be in one of them'),
    initialInput: z.record(z.string(), z.unknown()).default({}),
  }),
  ['workflowId', 'referenceEntityId'],
  'Send workflowId or referenceEntityId',
);
export type InitiateBody = z.infer<typeof initiateBodySchema>;

const payloadEntrySchema = z.looseObject({ value: z.unknown() });

const executeFields = z.object({
  jobPayloadSchema: z
    .record(z.string(), payloadEntrySchema)
    .optional()
    .describe('The input schema populated with values: each entry (keyed by variable_name) with a `value`'),
  inputs: z.record(z.string(), z.unknown()).optional().describe('Convenience: values keyed by variable_name'),
  callbackUrl: z
    .url({ protocol: /^https?$/ })
    .max(2048)
    .optional()
    .describe('POSTed { caseId, status, results, error? } when the case ends'),
  timeoutMs: z
    .number()
    .int()
    .min(1000)
    .optional()
    .describe('Case deadline; past it the case ends TIMED_OUT (default and maximum are configured)'),
  startAt: isoTime
    .optional()
    .describe(
      'A delayed start (RFC 3339): the run begins then, not now; in the future and at most cases.maxStartDelayMs (default 30 days) ahead. Cancel before then cancels it.',
    ),
});

/**
 * Documents that jobPayloadSchema and inputs do not go together; the case
 * service refuses both after the case's state check (409 comes first).
 */
export function withOneInputForm<T extends z.ZodObject>(schema: T): T {
  return schema.meta({ not: { required: ['jobPayloadSchema', 'inputs'] } });
}

/** The execute body with the configured case deadline as timeoutMs' maximum, so the document states it. */
export function executeBodySchema(maxDeadlineMs: number) {
  return withOneInputForm(
    executeFields.extend({ timeoutMs: executeFields.shape.timeoutMs.unwrap().max(maxDeadlineMs).optional() }),
  );
}
export type ExecuteBody = z.infer<typeof executeFields>;

/** How a rerun of one case is asked for. */
export const rerunBodySchema = z.object({
  from: z
    .enum(rerunFroms)
    .describe(
      'start: every node runs again; failed (a FAILED case only): the nodes that completed are not run again, their ' +
        'recorded outputs are reused, and only the failed node and what depends on it run',
    ),
  version: z
    .enum(rerunVersions)
    .default('original')
    .describe('original: the version the case ran; latest: the workflow’s latest active version'),
  inputs: z
    .record(z.string(), z.unknown())
    .optional()
    .describe('Values over the original case’s inputs, keyed by variable_name; validated like an execute’s inputs'),
});
export type RerunBody = z.infer<typeof rerunBodySchema>;
