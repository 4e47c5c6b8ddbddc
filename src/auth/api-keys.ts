import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';

/**
 * Key format: `cf_<key id without dashes>_<secret>`. The id finds the row in
 * one lookup; only a hash of the 256-bit secret is stored, and because the
 * secret is random and long a plain SHA-256 is enough (no password stretching).
 */
const keyPattern = /^cf_([0-9a-f]{32})_([A-Za-z0-9_-]{43})$/;

export interface IssuedKey {
  id: string;
  key: string;
  secretHash: string;
}

export function issueKey(): IssuedKey {
  const id = randomUUID();
  const secret = randomBytes(32).toString('base64url');
  return { id, key: `cf_${id.replaceAll('-', '')}_${secret}`, secretHash: hashSecret(secret) };
}

export function parseKey(key: string): { id: string; secret: string } | undefined {
  const match = keyPattern.exec(key.trim());
  if (!match) return undefined;
  const hex = match[1] as string;
  const id = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  return { id, secret: match[2] as string };
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function secretMatches(secret: string, storedHash: string): boolean {
  const a = Buffer.from(hashSecret(secret), 'hex');
  const b = Buffer.from(storedHash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}
