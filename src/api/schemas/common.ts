import { z } from 'zod';
import { uuid } from '../../domain/ids.js';

export { uuid };

const blankAsInvalid = (value: unknown) => (typeof value === 'string' && value.trim() === '' ? Number.NaN : value);

/** An integer in the query: coerced from its text, but a blank value (`?offset=`) is refused, not read as 0. */
export function queryInt(bounds: { min?: number; max?: number } = {}) {
  let integer = z.coerce.number().int();
  if (bounds.min !== undefined) integer = integer.min(bounds.min);
  if (bounds.max !== undefined) integer = integer.max(bounds.max);
  return z.preprocess(blankAsInvalid, integer);
}

export const errorBodySchema = z
  .object({
    statusCode: z.number().int(),
    message: z.string(),
    errorCode: z.string(),
    timestamp: z.iso.datetime(),
    path: z.string(),
    metadata: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ description: 'The body of every error response.' });

/** Query fields of every cursor-paginated list. */
export const pageQueryFields = {
  limit: queryInt({ min: 1, max: 100 }).default(20).meta({ description: 'Items per page (default 20, at most 100)' }),
  cursor: z
    .string()
    .min(1)
    .max(500)
    .optional()
    .meta({ description: 'nextCursor of the previous page (opaque); without it the first page' }),
};

export const nextCursorSchema = z
  .string()
  .nullable()
  .meta({ description: 'Pass as cursor for the next page; null on the last page' });

/** An Idempotency-Key header value (RFC draft-ietf-httpapi-idempotency-key-header): 1-255 printable ASCII characters. */
export const idempotencyKeyValue = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[\x21-\x7e]+$/, 'printable ASCII without spaces');

/** The Idempotency-Key header of a case start or hook delivery. */
export const startIdempotencyHeaders = z.object({
  'idempotency-key': idempotencyKeyValue.optional().meta({
    description:
      'A retry with the same key and body within 24 hours answers the first answer (status and body, header ' +
      'Idempotency-Replayed: true) and creates nothing; the same key with another body is 409. Keys are scoped to the ' +
      'organization; a concurrent retry waits for the first request to finish.',
  }),
});
