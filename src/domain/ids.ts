import { z } from 'zod';

/** Every id the service hands out is a UUID; requests naming one are checked with this. */
export const uuid = z.uuid({ message: 'must be a UUID' });
