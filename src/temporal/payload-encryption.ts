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
    return {
      metadata: {
        encoding: Buffer.from(encryptedEncoding),
        [keyIdMetadata]: Buffer.from(this.box.currentKeyId),
      },
      data: this.box.seal(frame(payload), context),
    };
  }

  decrypt(payload: Payload): Payload {
    const keyId = Buffer.from(payload.metadata?.[keyIdMetadata] ?? []).toString();
    try {
      return unframe(this.box.open(keyId, payload.data ?? new Uint8Array(), context));
    } catch (err) {
      if (err instanceof SecretBoxError) throw new PayloadEncryptionError(`encrypted payload: ${err.message}`);
      throw err;
    }
  }
}

export function isEncrypted(payload: Payload): boolean {
  const encoding = payload.metadata?.encoding;
  return encoding !== undefined && Buffer.from(encoding).toString() === encryptedEncoding;
}

/** `count, (key length, key, value length, value)*, data`, lengths as 32-bit big-endian. */
function frame(payload: Payload): Buffer {
  const parts: Buffer[] = [];
  const entries = Object.entries(payload.metadata ?? {});
  parts.push(uint32(entries.length));
  for (const [key, value] of entries) {
    const name = Buffer.from(key);
    parts.push(uint32(name.length), name, uint32(value.length), Buffer.from(value));
  }
  if (payload.data) parts.push(Buffer.from(payload.data));
  return Buffer.concat(parts);
}

function unframe(bytes: Buffer): Payload {
  let offset = 0;
  const take = (length: number): Buffer => {
    if (offset + length > bytes.length) throw new PayloadEncryptionError('encrypted payload: frame is truncated');
    const part = bytes.subarray(offset, offset + length);
    offset += length;
    return part;
  };
  const count = take(4).readUInt32BE();
  const metadata: Record<string, Uint8Array> = {};
  for (let i = 0; i < count; i++) {
    const key = take(take(4).readUInt32BE()).toString();
    metadata[key] = take(take(4).readUInt32BE());
  }
  return { metadata, data: bytes.subarray(offset) };
}

function uint32(value: number): Buffer {
  const buffer = Buffer.alloc(4);
  buffer.writeUInt32BE(value);
  return buffer;
}
