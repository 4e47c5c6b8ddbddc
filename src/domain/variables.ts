import { z } from 'zod';

/**
 * Value types a workflow variable may carry. The contract's input-schema types
 * (str, float, bool, date, file, array, array_files, object) plus the catalog's
 * field types (int, json_string, binary, node) so code-node and action fields
 * map onto node variables without loss.
 */
export const variableTypes = ['str', 'int', 'float', 'bool', 'date', 'file', 'array', 'array_files', 'object', 'json_string', 'binary', 'node'] as const;
export type VariableType = (typeof variableTypes)[number];

export const variableTagSchema = z.object({ variable_name: z.string().min(1), value: z.unknown() });

export const variableSchemaEntrySchema = z.object({
  id: z.string().min(1),
  variable_name: z.string().min(1).max(255),
  allowed_types: z.array(z.object({ type: z.enum(variableTypes) })).min(1).max(11),
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
