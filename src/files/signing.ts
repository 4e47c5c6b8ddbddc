import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const secretFileName = 'file-signing.key';

/**
 * The secret that signs upload URLs: CASEFLOW_FILE_SIGNING_SECRET when set
 * (every API process of a fleet must share it), otherwise a random key in
 * the data directory, created on first start with mode 0600. The exclusive
 * create ('wx') makes two processes starting together agree on one key.
 */
export function loadSigningSecret(dataDir: string, configured?: string): Buffer {
  if (configured) return Buffer.from(configured, 'utf8');
  const file = path.join(dataDir, secretFileName);
  try {
    return readSecretFile(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  mkdirSync(dataDir, { recursive: true });
  try {
    writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return readSecretFile(file);
}

function readSecretFile(file: string): Buffer {
  const content = readFileSync(file, 'utf8').trim();
  if (content.length < 32)
    throw new Error(`${file} holds no usable file-signing secret (expected 32+ base64 characters)`);
  return Buffer.from(content, 'base64');
}

/** Signs and verifies the upload capability: (file id, expiry) under an HMAC-SHA256. */
export class UploadSigner {
  constructor(private readonly secret: Buffer) {}

  sign(fileId: string, expiresAtSeconds: number): string {
    return createHmac('sha256', this.secret).update(`PUT\n${fileId}\n${expiresAtSeconds}`).digest('base64url');
  }

  /** Constant-time comparison, so the signature cannot be guessed byte by byte. */
  verify(fileId: string, expiresAtSeconds: number, signature: string): boolean {
    const expected = Buffer.from(this.sign(fileId, expiresAtSeconds));
    const presented = Buffer.from(signature);
    return expected.length === presented.length && timingSafeEqual(expected, presented);
  }
}
