import { DomainError } from '../errors.js';
import { stringifyJson } from '../domain/json-text.js';

/**
 * Case inputs and node outputs travel through Temporal history (workflow
 * input, activity results, local-activity markers). The server warns at 2 MB
 * per payload and rejects at 4 MB by default; a rejected payload fails the
 * workflow task over and over instead of failing the case. So both are
 * bounded well below that (config `cases.maxInputBytes`,
 * `cases.maxNodeOutputBytes`), measured as UTF-8 JSON, which is how the
 * default data converter encodes them.
 */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(stringifyJson(value) ?? '', 'utf8');
}

/** 413 PAYLOAD_TOO_LARGE when the case inputs (as they would start the run) exceed the limit. */
export function assertCaseInputsWithinLimit(inputs: Record<string, unknown>, maxBytes: number, field: string): void {
  assertWithinLimit(inputs, maxBytes, field, 'the case inputs are');
}

/** 413 PAYLOAD_TOO_LARGE when a person's decision, which becomes a node's outputs, exceeds cases.maxNodeOutputBytes. */
export function assertOutputsWithinLimit(outputs: Record<string, unknown>, maxBytes: number, field: string): void {
  assertWithinLimit(outputs, maxBytes, field, 'the outputs (cases.maxNodeOutputBytes) are');
}

function assertWithinLimit(value: Record<string, unknown>, maxBytes: number, field: string, what: string): void {
  const size = jsonBytes(value);
  if (size <= maxBytes) return;
  throw DomainError.tooLarge(
    `Invalid ${field}: ${what} ${size} bytes as JSON, at most ${maxBytes} are allowed; pass large data as files`,
    {
      field,
      sizeBytes: size,
      limitBytes: maxBytes,
    },
  );
}
