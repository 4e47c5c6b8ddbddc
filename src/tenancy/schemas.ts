import { z } from 'zod';
import { grantSchema } from '../domain/grants.js';
import { uuid } from '../domain/ids.js';

const emailPattern =
  /^(?!\.)(?!.*\.\.)[A-Za-z0-9_'+\-.]{0,63}[A-Za-z0-9_+-]@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/;

export const createOrganizationInput = z.object({
  name: z.string().min(1).max(255),
  verified: z.boolean().default(false),
});

export const createWorkspaceInput = z.object({
  name: z.string().min(1).max(255),
});

export const createUserInput = z.object({
  // Domain labels may not end in a hyphen, and the lengths are RFC 5321's: zod's default pattern allows both.
  email: z.email({ pattern: emailPattern }).max(254),
  name: z.string().min(1).max(255),
  /** Make the new user a member of this organization at once. */
  organizationId: uuid.optional(),
  role: z.enum(['owner', 'admin', 'member']).default('member'),
});

export const addMemberInput = z.object({
  userId: uuid,
  role: z.enum(['owner', 'admin', 'member']).default('member'),
});

export const createKeyInput = z.object({
  organizationId: uuid,
  userId: uuid,
  name: z.string().min(1).max(255),
  grants: z.array(grantSchema).min(1),
  /** Omit for an organization-scoped key. */
  workspaceIds: z.array(uuid).min(1).optional(),
  expiresAt: z.iso.datetime({ offset: true }).optional(),
});

const keyScopeSchema = z.union([
  z.object({ type: z.literal('organization') }),
  z.object({ type: z.literal('workspaces'), workspaceIds: z.array(z.string()) }),
]);

/** A key as operators see it: never the secret or its hash. */
export const keyViewSchema = z.object({
  id: z.string(),
  organizationId: z.string(),
  userId: z.string(),
  name: z.string(),
  scope: keyScopeSchema,
  grants: z.array(grantSchema),
  expiresAt: z.string().nullable(),
  revokedAt: z.string().nullable(),
  lastUsedAt: z.string().nullable(),
  createdAt: z.string(),
});

export type KeyView = z.infer<typeof keyViewSchema>;
