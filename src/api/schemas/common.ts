import { z } from 'zod';

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

export const uuid = z.uuid({ message: 'must be a UUID' });

export const uuidParam = (name: string) => z.object({ [name]: uuid });
