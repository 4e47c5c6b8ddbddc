import path from 'node:path';
import type { DataConverter } from '@temporalio/common';
import { projectRoot } from '../config/paths.js';
import type { PayloadEncryption } from './payload-encryption.js';

/** The compiled failure converter (the SDK requires it by path, like the prebuilt workflow bundle). */
export const failureConverterPath = path.join(projectRoot, 'dist', 'src', 'temporal', 'failure-converter.js');

/** What the client and the worker convert with: encrypted payloads, failure messages inside them. */
export function encryptingDataConverter(codec: PayloadEncryption): DataConverter {
  return { failureConverterPath, payloadCodecs: [codec] };
}
