import { createReadStream } from 'node:fs';
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';

export interface StoredObjectMeta {
  contentType: string;
  size: number;
}

/**
 * Where file bytes live. Uploads always arrive through the service into a
 * local temporary file (so size, type and single use are enforced on the
 * bytes), and are committed to the backend only once they passed; a backend
 * therefore never holds a partial or unchecked file.
 */
export interface FileStorage {
  readonly kind: 'local' | 's3';
  /** Local directory for uploads in flight; the same filesystem as the local backend, so commit is a rename. */
  readonly tempDir: string;
  /** Moves a checked temporary file into the store under key; the temporary file is gone afterwards. */
  commit(tempFile: string, key: string, meta: StoredObjectMeta): Promise<void>;
  /** Stores bytes held in memory (node outputs) under key, all or nothing. */
  putBytes(key: string, bytes: Buffer, contentType: string): Promise<void>;
  /** The bytes under key as a stream, or undefined when there are none. */
  open(key: string): Promise<Readable | undefined>;
  remove(key: string): Promise<void>;
}

/** Temp files older than this are leftovers of a crashed process: no upload URL lives this long. */
const staleTempMs = 24 * 60 * 60 * 1000;

/** Deletes temporary upload files a crashed process left behind. */
export async function sweepStaleTempFiles(tempDir: string, now = Date.now()): Promise<number> {
  let removed = 0;
  const names = await readdir(tempDir).catch(() => [] as string[]);
  for (const name of names) {
    const file = path.join(tempDir, name);
    const info = await stat(file).catch(() => undefined);
    if (info && now - info.mtimeMs > staleTempMs) {
      await rm(file, { force: true });
      removed += 1;
    }
  }
  return removed;
}

/** Files on disk under `<dataDir>/files/objects/<key>`: the single-machine default. */
export class LocalFileStorage implements FileStorage {
  readonly kind = 'local' as const;
  readonly tempDir: string;
  private readonly objectsDir: string;

  constructor(root: string) {
    this.tempDir = path.join(root, 'tmp');
    this.objectsDir = path.join(root, 'objects');
  }

  async commit(tempFile: string, key: string): Promise<void> {
    const target = this.pathOf(key);
    await mkdir(path.dirname(target), { recursive: true });
    await rename(tempFile, target);
  }

  async putBytes(key: string, bytes: Buffer): Promise<void> {
    await mkdir(this.tempDir, { recursive: true });
    const temp = path.join(this.tempDir, `${path.basename(key)}.${process.pid}.part`);
    await writeFile(temp, bytes, { mode: 0o600 });
    await this.commit(temp, key);
  }

  async open(key: string): Promise<Readable | undefined> {
    const file = this.pathOf(key);
    const info = await stat(file).catch(() => undefined);
    return info?.isFile() ? createReadStream(file) : undefined;
  }

  async remove(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  /** Keys are made by the service (`<org>/<file id><ext>`); refusing '..' keeps any key inside the store. */
  private pathOf(key: string): string {
    if (key.split('/').some((part) => part === '..' || part === '')) throw new Error(`Invalid storage key ${key}`);
    return path.join(this.objectsDir, ...key.split('/'));
  }
}
