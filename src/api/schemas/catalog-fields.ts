import { z } from 'zod';
import { catalogFieldTypes, type CatalogField, type CatalogFieldType } from '../../domain/catalog-field.js';

export { catalogFieldTypes };
export type { CatalogField, CatalogFieldType } from '../../domain/catalog-field.js';

/**
 * The catalog's Field object: one typed variable of an integration action's
 * or a code node's `inputs`/`outputs` (camelCase, as the contract writes it).
 * Shared by every catalog author endpoint so the shape and its limits live in
 * one place.
 */

export const fieldLimits = {
  name: 255,
  description: 2048,
  allowedTypes: 11,
  listEntries: 20,
  typeDefinitionEntries: 50,
  /**
   * typeDefinition nesting depth (the contract bounds breadth only). A bound
   * keeps validation from recursing as deep as a hostile body likes.
   */
  typeDefinitionDepth: 10,
} as const;

/** The Field object's own keys: what `nonEditableFields` may name. */
export const fieldKeys = [
  'id',
  'variableName',
  'displayName',
  'allowedTypes',
  'description',
  'default',
  'isOptional',
  'tags',
  'options',
  'nonEditableFields',
  'isRemovable',
] as const;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isJsonText(value: string): boolean {
  try {
    JSON.parse(value);
    return true;
  } catch {
    return false;
  }
}

/** Whether a JSON value can stand for a variable of this type (used for `default`). */
export function valueMatchesType(value: unknown, type: CatalogFieldType): boolean {
  switch (type) {
    case 'int':
      return typeof value === 'number' && Number.isInteger(value);
    case 'float':
      return typeof value === 'number' && Number.isFinite(value);
    case 'bool':
      return typeof value === 'boolean';
    case 'object':
      return isPlainObject(value);
    case 'array':
      return Array.isArray(value);
    case 'date':
      return typeof value === 'string' && !Number.isNaN(Date.parse(value));
    case 'json_string':
      return typeof value === 'string' && isJsonText(value);
    // str, file (a URL), binary (base64 text) and node (a node reference) all travel as strings.
    case 'str':
    case 'file':
    case 'binary':
    case 'node':
      return typeof value === 'string';
  }
}

/**
 * How deep typeDefinition maps nest below this value, counted without
 * recursion so that the check itself cannot be driven into a stack overflow.
 */
export function typeDefinitionDepth(field: unknown): number {
  let deepest = 0;
  const pending: Array<{ value: unknown; depth: number }> = [{ value: field, depth: 0 }];
  while (pending.length > 0) {
    const { value, depth } = pending.pop() as { value: unknown; depth: number };
    if (!isPlainObject(value) || !Array.isArray(value.allowedTypes)) continue;
    for (const allowed of value.allowedTypes) {
      if (!isPlainObject(allowed) || !isPlainObject(allowed.typeDefinition)) continue;
      deepest = Math.max(deepest, depth + 1);
      // One past the limit is enough to reject; stop walking there.
      if (depth + 1 > fieldLimits.typeDefinitionDepth) return depth + 1;
      for (const inner of Object.values(allowed.typeDefinition)) pending.push({ value: inner, depth: depth + 1 });
    }
  }
  return deepest;
}

const shortText = z.string().min(1).max(fieldLimits.name);

/** A key of an allowedTypes entry sent on the field itself: refused with where it belongs. */
const misplaced = (key: string) =>
  z
    .never({ error: `${key} belongs inside an allowedTypes entry (next to its type), not on the field` })
    .optional()
    .meta({ description: `Not here: ${key} goes inside an allowedTypes entry` });

export const catalogAllowedTypeSchema = z
  .object({
    type: z.enum(catalogFieldTypes),
    /** For `array` a single-key map naming the element; for `object` a map of properties. */
    get typeDefinition() {
      return z
        .record(z.string().min(1), catalogFieldSchema)
        .refine((map) => Object.keys(map).length <= fieldLimits.typeDefinitionEntries, {
          message: `typeDefinition has at most ${fieldLimits.typeDefinitionEntries} entries`,
        })
        .meta({
          // zod has no size check for a record that the JSON Schema would carry; the refine above enforces it.
          maxProperties: fieldLimits.typeDefinitionEntries,
          description: `Inner shape of a composite type; each value is a field definition; max ${fieldLimits.typeDefinitionEntries} entries, ${fieldLimits.typeDefinitionDepth} levels deep`,
        })
        .optional();
    },
    typeDefinitionEnforced: z.boolean().optional(),
  })
  .superRefine((allowed, ctx) => {
    if (!allowed.typeDefinition) return;
    if (allowed.type !== 'array' && allowed.type !== 'object') {
      ctx.addIssue({
        code: 'custom',
        path: ['typeDefinition'],
        message: `typeDefinition applies to the composite types array and object, not ${allowed.type}`,
      });
    } else if (allowed.type === 'array' && Object.keys(allowed.typeDefinition).length !== 1) {
      ctx.addIssue({
        code: 'custom',
        path: ['typeDefinition'],
        message: 'typeDefinition of an array is a single-key map naming the element',
      });
    }
  });

export const catalogFieldSchema: z.ZodType<CatalogField> = z
  .object({
    id: shortText
      .regex(/^[1-9][0-9]*$/, 'a 1-indexed position written as a string ("1", "2", ...)')
      .meta({ description: 'Positional, 1-indexed, as a string' }),
    variableName: shortText.meta({ description: 'Referenced from code; equals the map key' }),
    displayName: shortText,
    allowedTypes: z
      .array(catalogAllowedTypeSchema)
      .min(1, 'at least one allowedTypes entry is required')
      .max(fieldLimits.allowedTypes, `at most ${fieldLimits.allowedTypes} allowedTypes entries`),
    description: z.string().max(fieldLimits.description).optional(),
    default: z.unknown().optional().meta({ description: 'Must match one of allowedTypes' }),
    isOptional: z
      .boolean()
      .default(false)
      .meta({ description: 'When true the workflow may omit the field at execute time' }),
    tags: z.array(shortText).max(fieldLimits.listEntries).optional(),
    options: z
      .array(z.record(z.string(), z.unknown()))
      .max(fieldLimits.listEntries)
      .optional()
      .meta({ description: 'Enum-style choices; non-empty renders a dropdown' }),
    nonEditableFields: z
      .array(z.enum(fieldKeys))
      .max(fieldLimits.listEntries)
      .optional()
      .meta({ description: 'Field object keys the builder locks' }),
    isRemovable: z.boolean().default(true).meta({ description: 'When false the builder hides the remove affordance' }),
    // Placed beside allowedTypes these would be dropped as unknown keys and the field saved without its shape.
    typeDefinition: misplaced('typeDefinition'),
    typeDefinitionEnforced: misplaced('typeDefinitionEnforced'),
  })
  .superRefine((field, ctx) => {
    if (field.default === undefined) return;
    if (!field.allowedTypes.some((allowed) => valueMatchesType(field.default, allowed.type))) {
      const names = field.allowedTypes.map((allowed) => allowed.type).join(', ');
      ctx.addIssue({
        code: 'custom',
        path: ['default'],
        message: `default does not match any of the allowed types (${names})`,
      });
    }
  })
  .meta({ id: 'CatalogField', description: 'A typed variable of a catalog entry (action or code node)' });

export interface FieldMapOptions {
  /** Most variables in the map. */
  maxEntries?: number;
  /** Most bytes of the map's JSON encoding (UTF-8). */
  maxJsonBytes?: number;
}

/**
 * An `inputs`/`outputs` map keyed by each field's `variableName`. Its size
 * limits and the nesting depth are checked before the recursive field schema
 * runs, so a deeply nested body is refused with a 400 instead of exhausting
 * the stack. (A preprocess step, unlike a plain pipe, leaves the documented
 * input schema the real field map.)
 */
export function catalogFieldMapSchema(options: FieldMapOptions = {}) {
  const { maxEntries, maxJsonBytes } = options;
  const limits = [
    maxEntries !== undefined ? `max ${maxEntries} variables` : '',
    maxJsonBytes !== undefined ? `max ${maxJsonBytes} bytes JSON-encoded` : '',
  ]
    .filter(Boolean)
    .join(', ');
  return z
    .preprocess(
      (map, ctx) => {
        if (!isPlainObject(map)) return map;
        const count = Object.keys(map).length;
        if (maxEntries !== undefined && count > maxEntries) {
          ctx.addIssue({ code: 'custom', message: `at most ${maxEntries} variables (got ${count})` });
        }
        let tooDeep = false;
        for (const [key, field] of Object.entries(map)) {
          if (typeDefinitionDepth(field) > fieldLimits.typeDefinitionDepth) {
            tooDeep = true;
            ctx.addIssue({
              code: 'custom',
              path: [key],
              message: `typeDefinition nests more than ${fieldLimits.typeDefinitionDepth} levels`,
            });
          }
        }
        // JSON.stringify recurses too: only measure a map already known to be shallow.
        if (maxJsonBytes !== undefined && !tooDeep) {
          const bytes = Buffer.byteLength(JSON.stringify(map), 'utf8');
          if (bytes > maxJsonBytes)
            ctx.addIssue({ code: 'custom', message: `at most ${maxJsonBytes} bytes JSON-encoded (got ${bytes})` });
        }
        return map;
      },
      z.record(z.string(), catalogFieldSchema).superRefine((map, ctx) => {
        for (const [key, field] of Object.entries(map)) {
          if (field.variableName !== key) {
            ctx.addIssue({
              code: 'custom',
              path: [key, 'variableName'],
              message: `variableName '${field.variableName}' must equal its map key '${key}'`,
            });
          }
        }
      }),
    )
    .meta({ description: `Fields keyed by variableName${limits ? ` (${limits})` : ''}` });
}
