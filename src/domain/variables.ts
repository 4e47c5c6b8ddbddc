import { z } from 'zod';
import { variableTypes } from './vocabulary.js';

export const variableTagSchema = z.object({ variable_name: z.string().min(1), value: z.unknown() });

export const variableSchemaEntrySchema = z.object({
  id: z.string().min(1),
  variable_name: z.string().min(1).max(255),
  allowed_types: z
    .array(z.object({ type: z.enum(variableTypes) }))
    .min(1)
    .max(11),
  display_name: z.string().max(255).optional(),
  description: z.string().max(2048).optional(),
  is_nullable: z.boolean().optional(),
  /** When true the caller may omit the value at execute time. */
  is_optional: z.boolean().optional(),
  default: z.unknown().optional(),
  tags: z.array(variableTagSchema).max(20).optional(),
});
export type VariableSchemaEntry = z.infer<typeof variableSchemaEntrySchema>;

/** A node's input or output schema: variables keyed by variable id. */
export const variableSchemaSchema = z.object({
  schema: z.record(z.string(), variableSchemaEntrySchema),
  variable_addition_allowed: z.boolean().default(false),
});
export type VariableSchema = z.infer<typeof variableSchemaSchema>;
