import { createReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, NoSuchKey, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';

export interface S3StorageSettings {
  bucket: string;
  region: string;
  endpoint?: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  forcePathStyle?: boolean;
  /** Key prefix inside the bucket, e.g. 'caseflow/'. */
  prefix: string;
}

/**
 * An S3-compatible bucket (AWS S3, MinIO, Ceph, R2...) for fleets: every API
 * and worker process reads and writes the same objects. Credentials come
 * from the settings or, when absent, the SDK's default chain (env, profile,
 * instance role).
 */
export class S3FileStorage {
  readonly kind = 's3' as const;
  private readonly client: S3Client;

  constructor(
    private readonly settings: S3StorageSettings,
    readonly tempDir: string,
  ) {
    this.client = new S3Client({
      region: settings.region,
      // Checksums only where S3 requires them: the SDK's default (aws-chunked bodies with trailing CRC32) is not understood by every S3-compatible store.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
      ...(settings.forcePathStyle !== undefined ? { forcePathStyle: settings.forcePathStyle } : {}),
      ...(settings.accessKeyId && settings.secretAccessKey
        ? { credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey } }
        : {}),
    });
  }

  async commit(tempFile: string, key: string, meta: { contentType: string; size: number }): Promise<void> {
    try {
      await this.client.send(
        new PutObjectCommand({
          Bucket: this.settings.bucket,
          Key: this.settings.prefix + key,
          Body: createReadStream(tempFile),
          ContentLength: meta.size,
          ContentType: meta.contentType,
        }),
      );
    } finally {
      await rm(tempFile, { force: true });
    }
  }

  async putBytes(key: string, bytes: Buffer, contentType: string): Promise<void> {
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.settings.bucket,
        Key: this.settings.prefix + key,
        Body: bytes,
        ContentType: contentType,
      }),
    );
  }

  async open(key: string): Promise<Readable | undefined> {
    try {
      const result = await this.client.send(
        new GetObjectCommand({ Bucket: this.settings.bucket, Key: this.settings.prefix + key }),
      );
      // In Node the SDK's body is an http.IncomingMessage, a Readable.
      return result.Body instanceof Readable ? result.Body : undefined;
    } catch (err) {
      if (err instanceof NoSuchKey) return undefined;
      throw err;
    }
  }

  async remove(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.settings.bucket, Key: this.settings.prefix + key }));
  }
}
