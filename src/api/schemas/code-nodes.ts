import { z } from 'zod';
import { atLeastOneOf } from '../../domain/at-least-one.js';
import { catalogFieldMapSchema, catalogFieldSchema } from './catalog-fields.js';

/** The contract's code-node limits (Limits table). */
const codeNodeLimits = {
  name: 255,
  description: 2048,
  icon: 65535,
  sourceCodeBytes: 262144,
  categories: 5,
  variables: 100,
  variablesJsonBytes: 512 * 1024,
  listEntries: 20,
} as const;

/** Top-level code-node fields, which `nonEditableFields` may name. */
const codeNodeFieldNames = [
  'name',
  'description',
  'icon',
  'sourceCode',
  'categories',
  'inputs',
  'outputs',
  'tags',
  'options',
] as const;

const updatableFields = [...codeNodeFieldNames, 'nonEditableFields'] as const;

const label = z.string().min(1).max(codeNodeLimits.name);
const sourceCode = z
  .string()
  .min(1)
  .refine((source) => Buffer.byteLength(source, 'utf8') <= codeNodeLimits.sourceCodeBytes, {
    message: `sourceCode is at most ${codeNodeLimits.sourceCodeBytes} bytes UTF-8 encoded`,
  })
  .meta({
    description: `Python module defining main(inputs) -> dict; max ${codeNodeLimits.sourceCodeBytes} bytes UTF-8 encoded`,
  });
const variables = catalogFieldMapSchema({
  maxEntries: codeNodeLimits.variables,
  maxJsonBytes: codeNodeLimits.variablesJsonBytes,
});
const description = z.string().max(codeNodeLimits.description);
const icon = z.string().max(codeNodeLimits.icon);
const categories = z.array(label).max(codeNodeLimits.categories);
const tags = z.array(label).max(codeNodeLimits.listEntries);
const options = z.array(z.record(z.string(), z.unknown())).max(codeNodeLimits.listEntries);
const nonEditableFields = z.array(z.enum(codeNodeFieldNames)).max(codeNodeLimits.listEntries);
/** Code nodes belong to the organization; a workspace id in the body is a caller mistake, said so loudly. */
const noWorkspace = z
  .never({ error: 'no workspace id is accepted: code nodes belong to the organization of the API key' })
  .optional()
  .meta({ description: 'Not accepted (400)' });

export const createCodeNodeBody = z
  .object({
    name: label,
    description: description.optional(),
    icon: icon.optional(),
    sourceCode,
    categories: categories.default([]),
    inputs: variables,
    outputs: variables,
    tags: tags.default([]),
    options: options.default([]),
    nonEditableFields: nonEditableFields.default([]),
    workspaceId: noWorkspace,
  })
  .meta({ description: 'Unknown fields such as providerId are ignored.' });

export const updateCodeNodeBody = atLeastOneOf(
  z.object({
    name: label.optional(),
    description: description.nullable().optional().meta({ description: 'null clears it' }),
    icon: icon.nullable().optional().meta({ description: 'null clears it' }),
    sourceCode: sourceCode.optional(),
    categories: categories.optional(),
    inputs: variables.optional().meta({ description: 'Replaces all inputs' }),
    outputs: variables.optional().meta({ description: 'Replaces all outputs' }),
    tags: tags.optional(),
    options: options.optional(),
    nonEditableFields: nonEditableFields.optional(),
    workspaceId: noWorkspace,
  }),
  updatableFields,
  'nothing to update: send at least one code node field',
).meta({
  description:
    'Any subset of the fields; the rest carry over from the latest version. Unknown fields such as providerId are ignored.',
});

export const codeNodeResponse = z.object({
  id: z.string(),
  versionId: z.string(),
  versionNumber: z.number().int().meta({ description: '1 at creation, +1 per update' }),
  name: z.string(),
  description: z.string().nullable(),
  icon: z.string().nullable(),
  sourceCode: z.string(),
  categories: z.array(z.string()),
  inputs: z.record(z.string(), catalogFieldSchema),
  outputs: z.record(z.string(), catalogFieldSchema),
  tags: z.array(z.string()),
  options: z.array(z.record(z.string(), z.unknown())),
  nonEditableFields: z.array(z.string()),
  createdAt: z.string().meta({ description: 'When the code node was registered' }),
  versionCreatedAt: z.string().meta({ description: 'When this version was cut' }),
});

/** A 400 carries either the field errors of validation or the scan's violations. */
export const codeNodeBadRequestBody = z.object({
  statusCode: z.literal(400),
  message: z.string(),
  errorCode: z.string().meta({ description: 'VALIDATION_ERROR (fields) or BAD_REQUEST (violations)' }),
  timestamp: z.string(),
  path: z.string(),
  // Absent on a 400 that names no field (malformed JSON, a refused workspace id).
  metadata: z
    .object({
      fields: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
      violations: z
        .array(z.object({ line: z.number().int(), col: z.number().int(), message: z.string() }))
        .optional()
        .meta({ description: 'Security-scan findings; line and col are 1-based' }),
    })
    .optional(),
});
