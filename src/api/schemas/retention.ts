import { z } from 'zod';

const days = z.number().int().min(1).max(36_500).nullable();

export const retentionPolicyBody = z
  .object({
    keepDays: days.meta({ description: 'Ended cases are erased this many days after they ended; null keeps them' }),
    keepFailedDays: days.meta({ description: 'FAILED and TIMED_OUT cases: this many days; null: as keepDays' }),
  })
  .strict();

export const retentionPolicySchema = z.object({
  organizationId: z.string(),
  keepDays: z.number().int().nullable(),
  keepFailedDays: z.number().int().nullable(),
  source: z
    .enum(['organization', 'default'])
    .meta({ description: "'default': the organization has no policy of its own; the configured defaults apply" }),
  updatedAt: z.string().nullable(),
});
