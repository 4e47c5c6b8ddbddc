import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import {
  loadMasterKeys,
  parseMasterKeys,
  SecretBox,
  SecretBoxError,
  secretBoxFromConfig,
} from '../../src/crypto/secret-box.js';

const keyA = randomBytes(32);
const keyB = randomBytes(32);
const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'caseflow-secretbox-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('SecretBox', () => {
  it('round-trips, never shows the plaintext, and uses a fresh IV per value', () => {
    const box = new SecretBox([{ id: 'a', key: keyA }]);
    const first = box.encrypt('whsec_top-secret');
    const second = box.encrypt('whsec_top-secret');
    expect(first).toMatch(/^v1:a:[A-Za-z0-9_-]+$/);
    expect(first).not.toContain('top-secret');
    expect(first).not.toBe(second);
    expect(box.decrypt(first)).toBe('whsec_top-secret');
    expect(box.decrypt(box.encrypt(''))).toBe('');
    expect(box.decrypt(box.encrypt('ünïcødé ✓'))).toBe('ünïcødé ✓');
  });

  it('never hands out an IV twice, across draws of its IV pool (256 IVs a draw)', () => {
    const box = new SecretBox([{ id: 'a', key: keyA }]);
    const ivs = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const sealed = box.seal(Buffer.from('same plaintext'));
      ivs.add(sealed.subarray(0, 12).toString('hex'));
      expect(box.open('a', sealed).toString()).toBe('same plaintext');
    }
    expect(ivs.size).toBe(1000);
  });

  it('binds a value to its context (associated data)', () => {
    const box = new SecretBox([{ id: 'a', key: keyA }]);
    const sealed = box.encrypt('s', 'webhook-secret:ws-1');
    expect(box.decrypt(sealed, 'webhook-secret:ws-1')).toBe('s');
    expect(() => box.decrypt(sealed, 'webhook-secret:ws-2')).toThrow(SecretBoxError);
    expect(() => box.decrypt(sealed)).toThrow('ciphertext failed authentication');
  });

  it('detects tampering and malformed input', () => {
    const box = new SecretBox([{ id: 'a', key: keyA }]);
    const sealed = box.encrypt('value');
    const raw = Buffer.from(sealed.split(':')[2] as string, 'base64url');
    raw[raw.length - 20] = (raw[raw.length - 20] as number) ^ 1;
    expect(() => box.decrypt(`v1:a:${raw.toString('base64url')}`)).toThrow('ciphertext failed authentication');
    expect(() => box.decrypt('plain text')).toThrow('not a secret box ciphertext');
    expect(() => box.decrypt('v2:a:AAAA')).toThrow('not a secret box ciphertext');
    expect(() => box.decrypt('v1:a:AAAA')).toThrow('ciphertext is truncated');
  });

  it('rotates: encrypts with the first key, decrypts with any known key, reports what to re-encrypt', () => {
    const old = new SecretBox([{ id: 'old', key: keyA }]);
    const sealedOld = old.encrypt('credential');
    const rotated = new SecretBox([
      { id: 'new', key: keyB },
      { id: 'old', key: keyA },
    ]);
    expect(rotated.currentKeyId).toBe('new');
    expect(rotated.decrypt(sealedOld)).toBe('credential');
    expect(rotated.needsReencryption(sealedOld)).toBe(true);
    const sealedNew = rotated.encrypt('credential');
    expect(sealedNew.startsWith('v1:new:')).toBe(true);
    expect(rotated.needsReencryption(sealedNew)).toBe(false);
    expect(() => old.decrypt(sealedNew)).toThrow('no master key with id "new" is configured');
  });

  it('opens a value sealed by the earlier seal (iv, ciphertext and tag concatenated): the format is unchanged', () => {
    // Made by main at f1297aa with the key 0x00..0x1f: `encrypt('whsec_fixed-vector', 'webhook-secret:ws-1')`.
    const box = new SecretBox([{ id: 'fixed', key: Buffer.from(Array.from({ length: 32 }, (_, i) => i)) }]);
    const vector = 'v1:fixed:VtpUezWgqN5MaECrY71hTL6zOusJgGaGkuAdhGKe0qPZIMvbnqa19G4SgnXQnA';
    expect(box.decrypt(vector, 'webhook-secret:ws-1')).toBe('whsec_fixed-vector');
    expect(() => box.decrypt(vector, 'webhook-secret:ws-2')).toThrow('ciphertext failed authentication');
  });

  it('seals in one buffer what the caller writes into it, binary and empty plaintexts included', () => {
    const box = new SecretBox([{ id: 'a', key: keyA }]);
    const plaintext = randomBytes(5000);
    const written = box.sealWritten(plaintext.length, (body) => plaintext.copy(body), 'ctx');
    expect(written.length).toBe(12 + plaintext.length + 16);
    expect(written.includes(plaintext.subarray(0, 64))).toBe(false);
    expect(box.open('a', written, 'ctx').equals(plaintext)).toBe(true);
    expect(() => box.open('a', written, 'other')).toThrow('ciphertext failed authentication');
    const empty = box.seal(new Uint8Array(0));
    expect(empty.length).toBe(28);
    expect(box.open('a', empty).length).toBe(0);
  });

  it('refuses to seal a plaintext its writer did not fill (the rest would be old heap memory)', () => {
    const box = new SecretBox([{ id: 'a', key: keyA }]);
    expect(() => box.sealWritten(10, (body) => body.write('short'), 'ctx')).toThrow('5 bytes written of a 10-byte');
  });

  it('rejects bad key rings', () => {
    expect(() => new SecretBox([])).toThrow('empty');
    expect(() => new SecretBox([{ id: 'a', key: randomBytes(16) }])).toThrow('must be 32 bytes');
    expect(() => new SecretBox([{ id: 'a:b', key: keyA }])).toThrow('must be 1-32 letters');
    expect(
      () =>
        new SecretBox([
          { id: 'a', key: keyA },
          { id: 'a', key: keyB },
        ]),
    ).toThrow('appears twice');
  });
});

describe('master keys', () => {
  it('parses one plain key (id from its fingerprint) or id:key pairs, first is current', () => {
    const [plain] = parseMasterKeys(keyA.toString('base64'), 'env');
    expect(plain?.id).toMatch(/^k[0-9a-f]{8}$/);
    expect(plain?.key.equals(keyA)).toBe(true);
    expect(parseMasterKeys(keyA.toString('base64'), 'env')[0]?.id).toBe(plain?.id);
    const ring = parseMasterKeys(`k2:${keyB.toString('base64')}, k1:${keyA.toString('base64')}`, 'env');
    expect(ring.map((k) => k.id)).toEqual(['k2', 'k1']);
    expect(() => parseMasterKeys('', 'env')).toThrow('no master key');
    expect(() => parseMasterKeys('k1:not*base64', 'env')).toThrow('is not base64');
    expect(() => parseMasterKeys(`k1:${randomBytes(31).toString('base64')}`, 'env')).toThrow('must decode to 32 bytes');
  });

  it('creates the key file once with mode 0600 and reuses it', () => {
    const keyFile = path.join(tempDir(), 'nested', 'master.key');
    const first = loadMasterKeys({ keyFile });
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const second = loadMasterKeys({ keyFile });
    expect(second[0]?.id).toBe(first[0]?.id);
    expect(second[0]?.key.equals(first[0]?.key as Buffer)).toBe(true);
    expect(readFileSync(keyFile, 'utf8')).toMatch(/^k\d{8}[0-9a-f]{4}:[A-Za-z0-9+/]+=*\n$/);
  });

  it('prefers the configured master key over the key file', () => {
    const dataDir = tempDir();
    const box = secretBoxFromConfig({ dataDir, secrets: { masterKey: `env1:${keyA.toString('base64')}` } });
    expect(box.currentKeyId).toBe('env1');
    const fromFile = secretBoxFromConfig({ dataDir, secrets: {} });
    expect(fromFile.currentKeyId).not.toBe('env1');
    expect(statSync(path.join(dataDir, 'master.key')).isFile()).toBe(true);
    expect(secretBoxFromConfig({ dataDir, secrets: {} })).toBe(fromFile);
  });
});
