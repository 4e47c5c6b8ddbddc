import type { Payload, PayloadCodec } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';

type History = temporal.api.history.v1.IHistory;

function isPayload(value: object): value is Payload {
  return 'metadata' in value && 'data' in value && (value as Payload).data instanceof Uint8Array;
}

/** Every payload of a history, at any depth (inputs, results, failures' attributes, memo, summaries…). */
export function payloadsOf(value: unknown, found: Payload[] = []): Payload[] {
  if (Array.isArray(value)) for (const item of value) payloadsOf(item, found);
  else if (typeof value === 'object' && value !== null && !(value instanceof Uint8Array)) {
    if (isPayload(value)) found.push(value);
    else for (const item of Object.values(value)) payloadsOf(item, found);
  }
  return found;
}

/**
 * A history as searchable text, each payload decoded by `codec` first (what the service itself can read):
 * a test that a secret never reaches Temporal must search the decoded payloads, not the ciphertext.
 */
export async function decodedHistoryText(history: History, codec: PayloadCodec): Promise<string> {
  const decoded = await codec.decode(payloadsOf(history));
  const text = decoded.map((payload) =>
    [
      ...Object.values(payload.metadata ?? {}).map((value) => Buffer.from(value).toString('utf8')),
      Buffer.from(payload.data ?? []).toString('utf8'),
    ].join('\n'),
  );
  return `${JSON.stringify(history)}\n${text.join('\n')}`;
}
