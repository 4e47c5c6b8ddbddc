import { createHash } from 'node:crypto';

/** The namespace of caseflow's name-derived ids (a fixed random UUID). */
const namespace = Buffer.from('6f1c4a52e0b94f3a9d7e2b8c5a1f0e37', 'hex');

/**
 * A UUID (version 5, RFC 9562) derived from a path of names: the same file always compiles to the same ids, so
 * applying it twice changes nothing.
 */
export function nameId(...path: string[]): string {
  const hash = createHash('sha1').update(namespace).update(JSON.stringify(path)).digest();
  hash[6] = ((hash[6] ?? 0) & 0x0f) | 0x50;
  hash[8] = ((hash[8] ?? 0) & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
