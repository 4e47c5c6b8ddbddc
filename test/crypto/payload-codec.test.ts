import { randomBytes } from 'node:crypto';
import type { Payload } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { SecretBox } from '../../src/crypto/secret-box.js';
import { PayloadEncryption, PayloadEncryptionError } from '../../src/temporal/payload-encryption.js';

const fixedKey = Buffer.from(Array.from({ length: 32 }, (_, i) => i));
const box = new SecretBox([{ id: 'fixed', key: fixedKey }]);
const codec = new PayloadEncryption(box);
/** The associated data the codec seals under (a private constant of payload-encryption.ts). */
const payloadContext = 'temporal-payload';

/**
 * Sealed by main at f1297aa (frame built from small Buffers and concatenated, then sealed by concatenation), key
 * 0x00..0x1f, id `fixed`, from `{ encoding: 'json/plain', 'mëta': [0, 1, 2, 255] }` and the data below.
 */
const oldVector = Buffer.from(
  'd2d372259cf9709a6a944de2289881ac799c642d81d008c2a32176bea39e4026a1a62fc194d473ba043fcb219bdb93c4f69ab27bdd9860ff747d88d53f1d9f6208f95d2758d698b9858f6ee63fb1009107afd47c069a054a6ce5197d0d3b6e24b0d5cfaa46',
  'hex',
);
const oldVectorPayload = {
  metadata: { encoding: Buffer.from('json/plain'), mëta: Buffer.from([0, 1, 2, 255]) },
  data: Buffer.from('{"greeting":"Hello, Ada!"}'),
};

const sealedPayload = (data: Uint8Array): Payload => ({
  metadata: { encoding: Buffer.from('binary/encrypted'), 'encryption-key-id': Buffer.from('fixed') },
  data,
});

/** The payload with its byte arrays in hex, to compare what came back with what went in. */
const hex = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
const plain = (payload: Payload) => ({
  metadata: Object.fromEntries(Object.entries(payload.metadata ?? {}).map(([k, v]) => [k, hex(v)])),
  data: hex(payload.data ?? new Uint8Array(0)),
});

const roundTrip = async (payload: Payload): Promise<Payload> => {
  const [sealed] = await codec.encode([payload]);
  if (!sealed) throw new Error('encode answered no payload');
  const [back] = await codec.decode([sealed]);
  if (!back) throw new Error('decode answered no payload');
  return back;
};

describe('the payload codec', () => {
  it('round-trips empty data, no metadata, many metadata entries and large data', async () => {
    const many = Object.fromEntries(
      Array.from({ length: 200 }, (_, i) => [`key-${i}-ü`, randomBytes(i % 7) as Uint8Array]),
    );
    const cases: Payload[] = [
      { metadata: { encoding: Buffer.from('binary/null') } },
      { metadata: { encoding: Buffer.from('json/plain') }, data: new Uint8Array(0) },
      { data: Buffer.from('"no metadata"') },
      { metadata: {}, data: Buffer.from('"empty metadata"') },
      { metadata: many, data: Buffer.from('{}') },
      { metadata: { encoding: Buffer.from('binary/plain') }, data: randomBytes(3 * 1024 * 1024) },
      // Views into a larger buffer, as protobuf decoding hands them out.
      { metadata: { encoding: randomBytes(64).subarray(10, 20) }, data: randomBytes(100).subarray(30, 90) },
    ];
    for (const payload of cases) {
      const back = await roundTrip(payload);
      expect(plain(back)).toEqual(plain({ metadata: payload.metadata ?? {}, data: payload.data ?? new Uint8Array(0) }));
    }
  });

  it('seals every byte: neither the metadata nor the data show, and the frame is as long as before', async () => {
    const data = Buffer.from('{"secret":"MARKER-payload-codec"}');
    const [sealed] = await codec.encode([{ metadata: { 'x-marker': Buffer.from('MARKER-meta') }, data }]);
    const bytes = Buffer.from(sealed?.data ?? []);
    expect(bytes.includes('MARKER')).toBe(false);
    // count, (key length, key, value length, value), data; plus iv and tag.
    expect(bytes.length).toBe(12 + 4 + 4 + 'x-marker'.length + 4 + 'MARKER-meta'.length + data.length + 16);
    expect(Buffer.from(sealed?.metadata?.encoding ?? []).toString()).toBe('binary/encrypted');
    expect(Buffer.from(sealed?.metadata?.['encryption-key-id'] ?? []).toString()).toBe('fixed');
  });

  it('opens a payload sealed the old way, and frames it byte for byte as the old way did', async () => {
    const [back] = await codec.decode([sealedPayload(oldVector)]);
    expect(plain(back ?? {})).toEqual(plain(oldVectorPayload));
    const [sealed] = await codec.encode([oldVectorPayload]);
    const frame = box.open('fixed', sealed?.data ?? new Uint8Array(0), payloadContext);
    expect(frame.toString('hex')).toBe(box.open('fixed', oldVector, payloadContext).toString('hex'));
  });

  it('refuses a truncated frame, sealed bytes cut short, another context, tampering and an unknown key', async () => {
    const frame = box.open('fixed', oldVector, payloadContext);
    // Every cut of the frame short of its metadata's end: the count, a length or a key/value runs past the end.
    const metadataEnd = frame.length - oldVectorPayload.data.length;
    for (let cut = 0; cut < metadataEnd; cut++) {
      await expect(codec.decode([sealedPayload(box.seal(frame.subarray(0, cut), payloadContext))])).rejects.toThrow(
        'encrypted payload: frame is truncated',
      );
    }
    await expect(codec.decode([sealedPayload(oldVector.subarray(0, 27))])).rejects.toThrow(
      'encrypted payload: ciphertext is truncated',
    );
    await expect(codec.decode([sealedPayload(box.seal(frame, 'webhook-secret:ws-1'))])).rejects.toThrow(
      PayloadEncryptionError,
    );
    await expect(codec.decode([sealedPayload(box.seal(frame))])).rejects.toThrow('ciphertext failed authentication');
    const tampered = Buffer.from(oldVector);
    tampered[20] = (tampered[20] as number) ^ 1;
    await expect(codec.decode([sealedPayload(tampered)])).rejects.toThrow('ciphertext failed authentication');
    const other = new PayloadEncryption(new SecretBox([{ id: 'other', key: randomBytes(32) }]));
    await expect(other.decode([sealedPayload(oldVector)])).rejects.toThrow('no master key with id "fixed"');
  });

  it('passes a payload it did not seal through unchanged', async () => {
    const clear = { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('1') };
    const [back] = await codec.decode([clear]);
    expect(back).toBe(clear);
  });
});
