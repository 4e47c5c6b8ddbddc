import { createCipheriv, createDecipheriv, createHash, randomBytes, randomFillSync } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/config.js';

/**
 * AES-256-GCM encryption of small secrets (webhook signing secrets,
 * integration credentials, OAuth tokens) under a master key ring.
 *
 * Ciphertext format: `v1:<keyId>:<base64url(iv[12] | ciphertext | tag[16])>`.
 * The key id travels with every value, so rotation is: put the new key first
 * in the ring (it encrypts), keep the old ones after it (they still decrypt),
 * re-encrypt what `needsReencryption` reports, then drop the old key.
 *
 * An optional `context` (associated data, e.g. `webhook-secret:<workspaceId>`)
 * binds a ciphertext to the row it belongs to: a value copied into another
 * row fails to decrypt instead of silently leaking across tenants.
 */

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;
const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;

/**
 * Fresh random IVs, drawn from the CSPRNG a few hundred at a time: one `randomBytes` call per seal cost about
 * half of what the AES-GCM operation itself costs (~1.8 against ~3.5 µs here). Each IV is handed
 * out once; the next draw overwrites the pool only after every IV of the last one was handed out.
 */
class IvPool {
  private readonly pool = Buffer.allocUnsafeSlow(IV_BYTES * 256);
  private offset = this.pool.length;

  /** A view of the pool: `seal` copies it into its output before the next draw. */
  next(): Buffer {
    if (this.offset === this.pool.length) {
      randomFillSync(this.pool);
      this.offset = 0;
    }
    const iv = this.pool.subarray(this.offset, this.offset + IV_BYTES);
    this.offset += IV_BYTES;
    return iv;
  }
}

const ivs = new IvPool();

export interface MasterKey {
  id: string;
  key: Buffer;
}

export class SecretBoxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretBoxError';
  }
}

export class SecretBox {
  private readonly keys: Map<string, Buffer>;
  /** The key new values are encrypted with. */
  readonly currentKeyId: string;

  constructor(ring: MasterKey[]) {
    const first = ring[0];
    if (!first) throw new SecretBoxError('the master key ring is empty');
    this.keys = new Map();
    for (const { id, key } of ring) {
      if (!KEY_ID.test(id)) throw new SecretBoxError(`master key id "${id}" must be 1-32 letters, digits, _ or -`);
      if (key.length !== KEY_BYTES)
        throw new SecretBoxError(`master key "${id}" must be ${KEY_BYTES} bytes, got ${key.length}`);
      if (this.keys.has(id)) throw new SecretBoxError(`master key id "${id}" appears twice`);
      this.keys.set(id, key);
    }
    this.currentKeyId = first.id;
  }

  encrypt(plaintext: string, context = ''): string {
    const sealed = this.seal(Buffer.from(plaintext, 'utf8'), context);
    return `${VERSION}:${this.currentKeyId}:${sealed.toString('base64url')}`;
  }

  decrypt(ciphertext: string, context = ''): string {
    const { keyId, sealed } = parseCiphertext(ciphertext);
    return this.open(keyId, sealed, context).toString('utf8');
  }

  /** Binary form for callers with their own framing (Temporal payloads): `iv[12] | ciphertext | tag[16]` under the current key. */
  seal(plaintext: Uint8Array, context = ''): Buffer {
    return this.sealWritten(
      plaintext.length,
      (body) => {
        body.set(plaintext);
        return plaintext.length;
      },
      context,
    );
  }

  /**
   * `seal` of a plaintext of known length that `write` puts straight into the output's middle and answers how many
   * bytes it wrote, so a framed plaintext needs no buffer of its own. One output buffer for iv, ciphertext and tag.
   */
  sealWritten(length: number, write: (body: Buffer) => number, context = ''): Buffer {
    const key = this.keys.get(this.currentKeyId) as Buffer;
    const sealed = Buffer.allocUnsafe(IV_BYTES + length + TAG_BYTES);
    const iv = sealed.subarray(0, IV_BYTES);
    ivs.next().copy(iv);
    const body = sealed.subarray(IV_BYTES, IV_BYTES + length);
    // The buffer is not zeroed: bytes `write` left would be old heap memory sealed into the output.
    const written = write(body);
    if (written !== length) throw new Error(`secret box: ${written} bytes written of a ${length}-byte plaintext`);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    // GCM is a stream mode: `update` returns as many bytes as it was given and `final` none, so the ciphertext
    // takes the plaintext's place. Checked, because a short answer would leave plaintext in the output.
    const ciphertext = cipher.update(body);
    if (ciphertext.length !== length || cipher.final().length !== 0) throw new Error('secret box: short GCM output');
    ciphertext.copy(body);
    cipher.getAuthTag().copy(sealed, IV_BYTES + length);
    return sealed;
  }

  /** Opens what `seal` made under the key `keyId` (the caller keeps the id next to the bytes). */
  open(keyId: string, sealed: Uint8Array, context = ''): Buffer {
    const key = this.keys.get(keyId);
    if (!key) throw new SecretBoxError(`no master key with id "${keyId}" is configured`);
    if (sealed.length < IV_BYTES + TAG_BYTES) throw new SecretBoxError('ciphertext is truncated');
    const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
    // As in `sealWritten`: `update` gives the whole plaintext, `final` only checks the tag.
    try {
      const plaintext = decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES));
      decipher.final();
      return plaintext;
    } catch {
      // GCM's tag check failed: wrong key material, tampering, or another row's context.
      throw new SecretBoxError('ciphertext failed authentication');
    }
  }

  /** True when the value was encrypted under a key other than the current one. */
  needsReencryption(ciphertext: string): boolean {
    return parseCiphertext(ciphertext).keyId !== this.currentKeyId;
  }
}

function parseCiphertext(ciphertext: string): { keyId: string; sealed: Buffer } {
  const parts = ciphertext.split(':');
  if (parts.length !== 3 || parts[0] !== VERSION || !KEY_ID.test(parts[1] ?? '')) {
    throw new SecretBoxError('not a secret box ciphertext');
  }
  return { keyId: parts[1] as string, sealed: Buffer.from(parts[2] as string, 'base64url') };
}

/**
 * Parses a key ring: either one base64 key (its id is derived from its
 * fingerprint) or comma/whitespace separated `id:base64` pairs, the first
 * being the current key.
 */
export function parseMasterKeys(text: string, source: string): MasterKey[] {
  const entries = text.split(/[\s,]+/).filter((entry) => entry !== '');
  if (entries.length === 0) throw new SecretBoxError(`${source}: no master key`);
  return entries.map((entry) => {
    const colon = entry.indexOf(':');
    const id = colon === -1 ? fingerprint(entry) : entry.slice(0, colon);
    const encoded = colon === -1 ? entry : entry.slice(colon + 1);
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) throw new SecretBoxError(`${source}: key "${id}" is not base64`);
    const key = Buffer.from(encoded, 'base64');
    if (key.length !== KEY_BYTES)
      throw new SecretBoxError(`${source}: key "${id}" must decode to ${KEY_BYTES} bytes, got ${key.length}`);
    return { id, key };
  });
}

function fingerprint(encoded: string): string {
  return 'k' + createHash('sha256').update(encoded).digest('hex').slice(0, 8);
}

export interface SecretBoxSource {
  /** CASEFLOW_MASTER_KEY: wins over the key file. */
  masterKey?: string;
  /** Where the generated key lives when no master key is configured. */
  keyFile: string;
}

/**
 * The key ring from configuration, or from the key file, which is created on
 * first use with a fresh random key and mode 0600.
 */
export function loadMasterKeys(source: SecretBoxSource): MasterKey[] {
  if (source.masterKey) return parseMasterKeys(source.masterKey, 'CASEFLOW_MASTER_KEY');
  if (!existsSync(source.keyFile)) createKeyFile(source.keyFile);
  return parseMasterKeys(readFileSync(source.keyFile, 'utf8'), source.keyFile);
}

function createKeyFile(keyFile: string): void {
  mkdirSync(path.dirname(keyFile), { recursive: true });
  // Written whole to a private temporary file, then linked into place: link()
  // fails with EEXIST instead of replacing, so a second process starting at
  // the same moment never reads a half-written file nor overwrites the key.
  const temporary = `${keyFile}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(temporary, `${generatedKeyId()}:${randomBytes(KEY_BYTES).toString('base64')}\n`, {
    mode: 0o600,
    flag: 'wx',
  });
  try {
    linkSync(temporary, keyFile);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    unlinkSync(temporary);
  }
}

/** Replaces the key file's ring whole (temporary file, then rename), mode 0600. */
function writeKeyFile(keyFile: string, ring: MasterKey[]): void {
  const temporary = `${keyFile}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(temporary, ring.map(({ id, key }) => `${id}:${key.toString('base64')}\n`).join(''), {
    mode: 0o600,
    flag: 'wx',
  });
  renameSync(temporary, keyFile);
}

/**
 * Rotation, step 1: a fresh key goes first in the key file (it encrypts from
 * now on); the old keys stay after it so existing values still decrypt.
 * Returns the new ring.
 */
export function addKeyToFile(keyFile: string): MasterKey[] {
  const old = loadMasterKeys({ keyFile });
  let id = generatedKeyId();
  while (old.some((key) => key.id === id)) id = generatedKeyId();
  const ring = [{ id, key: randomBytes(KEY_BYTES) }, ...old];
  writeKeyFile(keyFile, ring);
  return ring;
}

/** Rotation, last step (after every value was re-encrypted): only the current key stays in the file. */
export function dropOldKeysFromFile(keyFile: string): string[] {
  const [current, ...old] = loadMasterKeys({ keyFile });
  if (current) writeKeyFile(keyFile, [current]);
  return old.map((key) => key.id);
}

function generatedKeyId(): string {
  return `k${new Date().toISOString().slice(0, 10).replaceAll('-', '')}${randomBytes(2).toString('hex')}`;
}

const boxes = new Map<string, SecretBox>();

/**
 * One SecretBox per key source for the process: the API and the worker of
 * one process share it, and the key file is read once.
 */
export function openSecretBox(source: SecretBoxSource): SecretBox {
  const cacheKey = `${source.keyFile}\0${source.masterKey ?? ''}`;
  let box = boxes.get(cacheKey);
  if (!box) {
    box = new SecretBox(loadMasterKeys(source));
    boxes.set(cacheKey, box);
  }
  return box;
}

/** Where the key ring lives when CASEFLOW_MASTER_KEY is not set (default `<dataDir>/master.key`). */
export function keyFileOf(config: Pick<Config, 'dataDir' | 'secrets'>): string {
  return config.secrets.keyFile
    ? path.resolve(config.dataDir, config.secrets.keyFile)
    : path.join(config.dataDir, 'master.key');
}

/** The process's SecretBox: CASEFLOW_MASTER_KEY, else the key file. */
export function secretBoxFromConfig(config: Pick<Config, 'dataDir' | 'secrets'>): SecretBox {
  return openSecretBox({ masterKey: config.secrets.masterKey, keyFile: keyFileOf(config) });
}
