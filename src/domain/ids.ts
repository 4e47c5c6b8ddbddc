import { z } from 'zod';

/** Every id the service hands out is a UUID; requests naming one are checked with this. */
export const uuid = z.uuid({ message: 'must be a UUID' });

const isoTimeMessage = 'an ISO 8601 date-time such as 2026-01-31T09:00:00Z';
/** RFC 3339 (the document's `date-time`): seconds required, which zod's own check leaves optional. */
export const isoTime = z.iso
  .datetime({ offset: true, message: isoTimeMessage })
  .regex(/T\d{2}:\d{2}:\d{2}/, isoTimeMessage);
