import type { z } from 'zod';

/**
 * An object that must carry at least one of `fields`. The rule is a refine
 * for validation and an `anyOf` of `required` for the JSON Schema, which a
 * refine alone leaves out: the OpenAPI document then says what is enforced.
 */
export function atLeastOneOf<T extends z.ZodObject>(
  schema: T,
  fields: readonly (keyof z.infer<T> & string)[],
  message: string,
) {
  return schema
    .refine((value: z.infer<T>) => fields.some((field) => value[field] !== undefined), { message })
    .meta({ anyOf: fields.map((field) => ({ required: [field] })) });
}
