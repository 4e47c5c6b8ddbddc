import type { HookMapping, InputSource } from '../domain/hooks.js';
import type { FieldProblem } from '../errors.js';

/** The value a JSON Pointer (RFC 6901) names in `document`; undefined when there is none. */
function resolvePointer(document: unknown, pointer: string): unknown {
  if (pointer === '') return document;
  let current: unknown = document;
  for (const raw of pointer.slice(1).split('/')) {
    const token = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (Array.isArray(current) && /^(0|[1-9]\d*)$/.test(token)) current = current[Number(token)];
    else if (
      typeof current === 'object' &&
      current !== null &&
      !Array.isArray(current) &&
      Object.hasOwn(current, token)
    )
      current = (current as Record<string, unknown>)[token];
    else return undefined;
  }
  return current;
}

/** Where a mapped input came from, for the messages of a delivery that does not map to valid inputs. */
export function describeSource(source: InputSource): string {
  if ('body' in source) return `body ${source.body || '(the whole body)'}`;
  if ('header' in source) return `header ${source.header}`;
  return 'a fixed value';
}

/** What a delivery gives the case: its inputs, and where each came from (undefined without a mapping). */
export interface MappedInputs {
  inputs: Record<string, unknown>;
  sources?: Record<string, InputSource>;
}

/**
 * The case inputs a delivery maps to: each mapped input from its source (an absent value is left out, so the
 * input schema's default or its "is required" applies); without a mapping, the body object itself.
 */
export function mapDelivery(
  mapping: HookMapping | null,
  body: unknown,
  header: (name: string) => string | undefined,
): MappedInputs | FieldProblem {
  if (mapping === null) {
    if (typeof body === 'object' && body !== null && !Array.isArray(body))
      return { inputs: body as Record<string, unknown> };
    return { field: 'body', message: 'must be a JSON object whose fields are the inputs (this hook has no mapping)' };
  }
  const inputs: Record<string, unknown> = {};
  for (const [name, source] of Object.entries(mapping)) {
    const value =
      'body' in source ? resolvePointer(body, source.body) : 'header' in source ? header(source.header) : source.value;
    if (value !== undefined) inputs[name] = value;
  }
  return { inputs, sources: mapping };
}
