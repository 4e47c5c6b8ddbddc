import { z } from 'zod';
import { uuid } from '../../domain/ids.js';

export { uuid };

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

export const uuidParam = (name: string) => z.object({ [name]: uuid });
