import { createReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import type * as S3SdkModule from '@aws-sdk/client-s3';
import type { S3Client } from '@aws-sdk/client-s3';

// The SDK is loaded only when S3 storage is configured: it costs ~20 MB of RSS in every process otherwise.
type S3Sdk = typeof S3SdkModule;

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
  private readonly connected: Promise<{ sdk: S3Sdk; client: S3Client }>;

  constructor(
    private readonly settings: S3StorageSettings,
    readonly tempDir: string,
  ) {
    this.connected = import('@aws-sdk/client-s3').then((sdk) => ({ sdk, client: S3FileStorage.client(sdk, settings) }));
    // A failed load surfaces on the first use, not as an unhandled rejection at start.
    this.connected.catch(() => undefined);
  }

  private static client(sdk: S3Sdk, settings: S3StorageSettings): S3Client {
    return new sdk.S3Client({
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
      const { sdk, client } = await this.connected;
      await client.send(
        new sdk.PutObjectCommand({
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
    const { sdk, client } = await this.connected;
    await client.send(
      new sdk.PutObjectCommand({
        Bucket: this.settings.bucket,
        Key: this.settings.prefix + key,
        Body: bytes,
        ContentType: contentType,
      }),
    );
  }

  async open(key: string): Promise<Readable | undefined> {
    const { sdk, client } = await this.connected;
    try {
      const result = await client.send(
        new sdk.GetObjectCommand({ Bucket: this.settings.bucket, Key: this.settings.prefix + key }),
      );
      // In Node the SDK's body is an http.IncomingMessage, a Readable.
      return result.Body instanceof Readable ? result.Body : undefined;
    } catch (err) {
      if (err instanceof sdk.NoSuchKey) return undefined;
      throw err;
    }
  }

  async remove(key: string): Promise<void> {
    const { sdk, client } = await this.connected;
    await client.send(new sdk.DeleteObjectCommand({ Bucket: this.settings.bucket, Key: this.settings.prefix + key }));
  }
}
