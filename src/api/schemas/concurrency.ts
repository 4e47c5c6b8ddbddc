import { z } from 'zod';

export const concurrencyPolicyBody = z
  .object({
    maxConcurrentCases: z.number().int().min(1).max(100_000).nullable().meta({
      description:
        'Cases of the organization running at once; more wait their turn (status QUEUED). null: no cap, whatever the configured default',
    }),
  })
  .strict();

export const concurrencyPolicySchema = z.object({
  organizationId: z.string(),
  maxConcurrentCases: z.number().int().nullable().meta({ description: 'The cap in force; null: none' }),
  source: z.enum(['organization', 'default']).meta({
    description: "'default': the organization has no cap of its own; cases.maxConcurrentPerOrganization applies",
  }),
  updatedAt: z.string().nullable(),
  running: z.number().int().meta({ description: 'Slots its cases hold now (RUNNING, not waiting on a person)' }),
  queued: z.number().int().meta({ description: 'Cases waiting in its queue (QUEUED)' }),
});
