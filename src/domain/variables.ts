import { z } from 'zod';
import { variableTypes, type VariableType } from './vocabulary.js';

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

const isoDate = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export const typeChecks: Record<VariableType, (v: unknown) => boolean> = {
  str: (v) => typeof v === 'string',
  int: (v) => typeof v === 'number' && Number.isInteger(v),
  float: (v) => typeof v === 'number' && Number.isFinite(v),
  bool: (v) => typeof v === 'boolean',
  date: (v) => typeof v === 'string' && isoDate.test(v) && !Number.isNaN(Date.parse(v)),
  file: (v) => typeof v === 'string',
  array: (v) => Array.isArray(v),
  array_files: (v) => Array.isArray(v) && v.every((f) => typeof f === 'string'),
  object: isPlainObject,
  json_string: (v) => {
    if (typeof v !== 'string') return false;
    try {
      JSON.parse(v);
      return true;
    } catch {
      return false;
    }
  },
  binary: (v) => typeof v === 'string',
  node: () => true,
};

/** Whether a value fits a variable: null where nullable, otherwise one of its allowed types. */
export function valueFits(entry: VariableSchemaEntry, value: unknown): boolean {
  if (value === null) return entry.is_nullable === true;
  return entry.allowed_types.some((t) => typeChecks[t.type](value));
}

/** The tag naming the values a case input or a form field may take (choices, as `allowed_file_types` names file types). */
const optionsTag = 'options';
/** At most this many choices (as a catalog field's options). */
const maxOptions = 20;

/** The variable's choices (its `options` tag's list); undefined when any value of its types goes. */
export function variableOptions(entry: VariableSchemaEntry): unknown[] | undefined {
  const tag = entry.tags?.find((t) => t.variable_name === optionsTag);
  return tag && Array.isArray(tag.value) ? tag.value : undefined;
}

/** What is wrong with a variable's `options` tag: a list of 1 to 20 distinct text or number values of its types. */
export function optionsProblem(entry: VariableSchemaEntry): string | undefined {
  if (!entry.tags?.some((t) => t.variable_name === optionsTag)) return undefined;
  const values = variableOptions(entry);
  if (!values || values.length === 0 || values.length > maxOptions)
    return `The ${optionsTag} tag needs a list of 1 to ${maxOptions} values`;
  const misfit = values.find(
    (v) => (typeof v !== 'string' && typeof v !== 'number') || !entry.allowed_types.some((t) => typeChecks[t.type](v)),
  );
  if (misfit !== undefined)
    return `Option ${JSON.stringify(misfit)} is not a text or number value of the variable's types (${entry.allowed_types.map((t) => t.type).join(', ')})`;
  if (new Set(values).size !== values.length) return `The ${optionsTag} tag lists a value twice`;
  if (entry.default !== undefined && entry.default !== null && !values.includes(entry.default))
    return `The default ${JSON.stringify(entry.default)} is not one of the options`;
  return undefined;
}
