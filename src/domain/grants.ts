import { z } from 'zod';

/**
 * What a key may do. "full" includes "read" of the same resource. Jobs and
 * cases share the case grants; files have their own. Discovery: Full
 * authors discovered processes (create, update, import, snapshot).
 */
export const grants = [
  'workflow:read',
  'workflow:full',
  'case:read',
  'case:full',
  'file:read',
  'file:full',
  'integration:read',
  'integration:full',
  'code:full',
  'discovery:read',
  'discovery:full',
] as const;

export type Grant = (typeof grants)[number];
export const grantSchema = z.enum(grants);

const implied: Partial<Record<Grant, Grant>> = {
  'workflow:read': 'workflow:full',
  'case:read': 'case:full',
  'file:read': 'file:full',
  'integration:read': 'integration:full',
  'discovery:read': 'discovery:full',
};

export function grantSatisfied(held: ReadonlySet<Grant>, needed: Grant): boolean {
  const stronger = implied[needed];
  return held.has(needed) || (stronger !== undefined && held.has(stronger));
}

/** Parses a comma list such as "workflow:full,case:full" or "all". */
export function parseGrantList(list: string): Grant[] {
  if (list.trim() === 'all') return [...grants];
  return list
    .split(',')
    .map((g) => g.trim())
    .filter(Boolean)
    .map((g) => grantSchema.parse(g));
}
