import { z } from 'zod';
import { atLeastOneOf } from './at-least-one.js';

/**
 * The discovered-process document as a client (or the BPMN import) supplies
 * it: every field of the contract's Discovered process and Step object except
 * the ones the service owns (id, organizationId, workspaceId, stepCount,
 * branchCount, createdAt, updatedAt). Optional fields default to null or [],
 * so a stored document always carries every field. Cross-field rules (unique
 * ids, edges between steps, branch consistency, min ≤ max) are in
 * process-rules.ts; this schema holds shapes and limits.
 */
export const discoveryLimits = {
  name: 255,
  text: 2048,
  id: 255,
  steps: 1000,
  edges: 5000,
  listEntries: 200,
} as const;

/** Units a duration or a range bound may use; ranges compare across them. */
export const durationUnits = ['seconds', 'minutes', 'hours', 'days', 'weeks', 'months'] as const;
export type DurationUnit = (typeof durationUnits)[number];

const id = z.string().trim().min(1).max(discoveryLimits.id);
const name = z.string().trim().min(1).max(discoveryLimits.name);
const text = z.string().max(discoveryLimits.text);
const label = z.string().max(discoveryLimits.name);
const nullableText = text.nullable().default(null);
const nullableLabel = label.nullable().default(null);

export const taggedItemSchema = z
  .object({ id, text: z.string().trim().min(1).max(discoveryLimits.text) })
  .meta({ description: 'An entry of a { id, text } list' });
const taggedList = z.array(taggedItemSchema).max(discoveryLimits.listEntries).default([]);

const durationUnit = z.enum(durationUnits);
const rangeBound = z.object({ value: z.number().min(0), unit: durationUnit });
export const durationRangeSchema = z
  .object({ min: rangeBound, max: rangeBound })
  .meta({ description: '{ min, max }, each { value, unit }; min ≤ max' });

export const stepSchema = z.object({
  id,
  name,
  description: nullableText,
  stepOrder: z
    .number()
    .int()
    .min(0)
    .nullable()
    .default(null)
    .meta({ description: 'Position of the step on its line (the main line or its branch); unique there' }),
  stepType: nullableLabel,
  status: nullableLabel,
  owner: nullableLabel.meta({ description: 'User id or display name' }),
  locked: z.boolean().default(false).meta({ description: 'Approved: locked against edits in the discovery tool' }),
  duration: z.number().min(0).nullable().default(null),
  durationUnit: durationUnit.nullable().default(null),
  durationRange: durationRangeSchema.nullable().default(null),
  waitingTimeRange: durationRangeSchema.nullable().default(null).meta({ description: 'Time waiting after the step' }),
  branchId: nullableLabel.meta({ description: 'The branch the step is on; null on the main line' }),
  branchLabel: nullableLabel,
  branchSourceStepId: nullableLabel.meta({ description: 'The step the branch leaves from (required with branchId)' }),
  branchRejoinStepId: nullableLabel.meta({
    description: 'The step the branch joins back into; null when it ends the process',
  }),
  branchOrder: z.number().int().min(0).nullable().default(null).meta({
    description:
      'Order among the branches leaving the same step (required with branchId); on a main-line step any number is accepted, and omitted it reads as 0',
  }),
  groupId: nullableLabel,
  inputs: taggedList,
  outputs: taggedList,
  integrations: taggedList,
  rules: taggedList,
  departments: taggedList,
  performers: taggedList,
  painPoints: taggedList,
});

/** A step as the read answers it: branchOrder is always a number (0 on the main line unless given). */
export const stepReadSchema = stepSchema.extend({
  branchOrder: z
    .number()
    .int()
    .min(0)
    .meta({ description: 'Order among the branches leaving the same step; 0 on the main line unless given' }),
});

export const customEdgeSchema = z.object({
  id,
  sourceStepId: id,
  targetStepId: id,
  label: label.optional(),
});

export const milestoneSchema = z.object({ country: nullableLabel, industry: nullableLabel });

const taggedItems = z.array(taggedItemSchema).max(discoveryLimits.listEntries);

/** Top-level fields without defaults: an update must tell an omitted field from one sent empty. */
const processFields = {
  name,
  description: text.nullable(),
  status: label.nullable().meta({ description: 'e.g. approved' }),
  processOrigin: label.nullable().meta({ description: 'Set when started from a business process template' }),
  parentProcessId: z
    .uuid({ message: 'must be a UUID' })
    .nullable()
    .meta({ description: 'Parent in the discovery hierarchy: a process of the same organization' }),
  steps: z.array(stepSchema).max(discoveryLimits.steps),
  customEdges: z.array(customEdgeSchema).max(discoveryLimits.edges),
  processInputs: taggedItems,
  processOutputs: taggedItems,
  processIntegrations: taggedItems.meta({ description: 'Process-level integrations; the read merges every step’s in' }),
  processRules: taggedItems,
  milestone: milestoneSchema.nullable(),
};

/** Every field of the document, absent ones defaulted; what create and import store. */
export const processContentSchema = z.object({
  ...processFields,
  description: processFields.description.default(null),
  status: processFields.status.default(null),
  processOrigin: processFields.processOrigin.default(null),
  parentProcessId: processFields.parentProcessId.default(null),
  customEdges: processFields.customEdges.default([]),
  processInputs: processFields.processInputs.default([]),
  processOutputs: processFields.processOutputs.default([]),
  processIntegrations: processFields.processIntegrations.default([]),
  processRules: processFields.processRules.default([]),
  milestone: processFields.milestone.default(null),
});

export type TaggedItem = z.infer<typeof taggedItemSchema>;
export type DurationRange = z.infer<typeof durationRangeSchema>;
export type Step = z.infer<typeof stepSchema>;
export type ReadStep = z.infer<typeof stepReadSchema>;
export type CustomEdge = z.infer<typeof customEdgeSchema>;
export type ProcessContent = z.infer<typeof processContentSchema>;

/** An update: any subset of the top-level fields; lists are replaced wholesale, null clears. */
export const processUpdateSchema = atLeastOneOf(
  z.object(processFields).partial(),
  Object.keys(processFields) as Array<keyof typeof processFields>,
  'nothing to update: send at least one process field',
);
