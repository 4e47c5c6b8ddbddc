import { DomainError } from '../errors.js';

/**
 * JSON bodies nest at most this deep. Serializing, hashing and schema checks
 * recurse; a 2 MB body of nested brackets would overflow the stack in them
 * and answer 500, so it is refused as a 400 first. (The catalog's deepest
 * legitimate shape, typeDefinition 10 levels down, needs about 60.)
 */
export const MAX_JSON_DEPTH = 128;

/** Measures without recursion, so the check itself cannot be driven into a stack overflow. */
export function assertJsonDepth(value: unknown, where: string, maxDepth = MAX_JSON_DEPTH): void {
  const pending: Array<{ value: unknown; depth: number }> = [{ value, depth: 1 }];
  while (pending.length > 0) {
    const next = pending.pop() as { value: unknown; depth: number };
    if (typeof next.value !== 'object' || next.value === null) continue;
    if (next.depth > maxDepth) throw DomainError.badRequest(`${where} nests deeper than ${maxDepth} levels`);
    for (const inner of Object.values(next.value)) pending.push({ value: inner, depth: next.depth + 1 });
  }
}
