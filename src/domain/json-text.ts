/**
 * JSON.stringify with its real return type: undefined for undefined, functions
 * and symbols (lib.d.ts says string), so callers handle that case visibly.
 */
export function stringifyJson(value: unknown): string | undefined {
  return JSON.stringify(value);
}
