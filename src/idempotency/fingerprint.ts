import { createHash } from 'node:crypto';
import { stringifyJson } from '../domain/json-text.js';

/** How long an Idempotency-Key is remembered; after that the same key creates anew. */
export const IDEMPOTENCY_TTL_MS = 24 * 3600_000;

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** JSON with object keys sorted, so the same request in another key order has the same fingerprint. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value)
      .filter(([, inner]) => inner !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, inner]) => `${JSON.stringify(key)}:${canonicalJson(inner)}`).join(',')}}`;
  }
  return stringifyJson(value) ?? 'null';
}

/** Only hashes are stored: the key may itself be a secret-looking token of the client's. */
export function idempotencyHashes(key: string, request: unknown): { keyHash: string; requestHash: string } {
  return { keyHash: sha256(key), requestHash: sha256(canonicalJson(request)) };
}
