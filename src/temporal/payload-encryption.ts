import type { Payload, PayloadCodec } from '@temporalio/common';
import { SecretBoxError, type SecretBox } from '../crypto/secret-box.js';

/**
 * Encrypts every payload Temporal stores for us (workflow and activity inputs and results, signals,
 * queries, updates, memo, failure details and, with the failure converter's encoded attributes,
 * failure messages and stacks, node summaries) with AES-256-GCM under the service's master key ring
 * (src/crypto/secret-box.ts), so a history read by whoever reaches Temporal or its database shows
 * ciphertext. The whole payload (its metadata too) is sealed; the key id travels in the clear
 * metadata, so after a rotation a history written under an older key decodes while that key stays in
 * the ring. A payload without the marker (recorded before this codec, or by another client) passes
 * through unchanged.
 */
export const encryptedEncoding = 'binary/encrypted';
export const keyIdMetadata = 'encryption-key-id';
/** Associated data: a secret-box value of another kind (a credential, a webhook secret) does not open as a payload. */
const context = 'temporal-payload';
const noBytes = new Uint8Array(0);

export class PayloadEncryptionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PayloadEncryptionError';
  }
}

export class PayloadEncryption implements PayloadCodec {
  constructor(private readonly box: SecretBox) {}

  // The work is synchronous; the executor turns a throw into the rejection the SDK awaits.
  encode(payloads: Payload[]): Promise<Payload[]> {
    return new Promise((resolve) => resolve(payloads.map((payload) => this.encrypt(payload))));
  }

  decode(payloads: Payload[]): Promise<Payload[]> {
    return new Promise((resolve) =>
      resolve(payloads.map((payload) => (isEncrypted(payload) ? this.decrypt(payload) : payload))),
    );
  }

  encrypt(payload: Payload): Payload {
    const entries = Object.entries(payload.metadata ?? {});
    const data = payload.data ?? noBytes;
    return {
      metadata: { encoding: Buffer.from(encryptedEncoding), [keyIdMetadata]: Buffer.from(this.box.currentKeyId) },
      data: this.box.sealWritten(frameLength(entries, data), (body) => writeFrame(body, entries, data), context),
    };
  }

  decrypt(payload: Payload): Payload {
    const keyId = text(payload.metadata?.[keyIdMetadata] ?? noBytes);
    try {
      return unframe(this.box.open(keyId, payload.data ?? noBytes, context));
    } catch (err) {
      if (err instanceof SecretBoxError) throw new PayloadEncryptionError(`encrypted payload: ${err.message}`);
      throw err;
    }
  }
}

export function isEncrypted(payload: Payload): boolean {
  const encoding = payload.metadata?.encoding;
  return encoding !== undefined && text(encoding) === encryptedEncoding;
}

/** The bytes as UTF-8, read in place (`Buffer.from(bytes)` would copy them first). */
function text(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString();
}

type Entries = Array<[string, Uint8Array]>;

/**
 * The frame is `count, (key length, key, value length, value)*, data`, lengths as 32-bit big-endian, keys in UTF-8.
 * Its length is known before it is written, so it is written once, into the sealed output (`SecretBox.sealWritten`).
 */
function frameLength(entries: Entries, data: Uint8Array): number {
  let length = 4 + data.length;
  for (const [key, value] of entries) length += 4 + Buffer.byteLength(key) + 4 + value.length;
  return length;
}

/** Writes the frame at the start of `out`; the bytes written. */
function writeFrame(out: Buffer, entries: Entries, data: Uint8Array): number {
  let offset = out.writeUInt32BE(entries.length, 0);
  for (const [key, value] of entries) {
    const keyLength = out.write(key, offset + 4);
    offset = out.writeUInt32BE(keyLength, offset) + keyLength;
    offset = out.writeUInt32BE(value.length, offset);
    out.set(value, offset);
    offset += value.length;
  }
  out.set(data, offset);
  return offset + data.length;
}

/** The payload framed in `bytes`; its metadata values and data are views of `bytes`. */
function unframe(bytes: Buffer): Payload {
  let offset = 0;
  const need = (length: number): void => {
    if (offset + length > bytes.length) throw new PayloadEncryptionError('encrypted payload: frame is truncated');
  };
  const length = (): number => {
    need(4);
    offset += 4;
    return bytes.readUInt32BE(offset - 4);
  };
  const take = (size: number): Buffer => {
    need(size);
    offset += size;
    return bytes.subarray(offset - size, offset);
  };
  const count = length();
  const metadata: Record<string, Uint8Array> = {};
  for (let i = 0; i < count; i++) {
    const key = take(length()).toString();
    metadata[key] = take(length());
  }
  return { metadata, data: bytes.subarray(offset) };
}
