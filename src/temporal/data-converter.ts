import path from 'node:path';
import type { DataConverter } from '@temporalio/common';
import { projectRoot } from '../config/paths.js';
import type { PayloadEncryption } from './payload-encryption.js';

const compiled = (name: string) => path.join(projectRoot, 'dist', 'src', 'temporal', `${name}.js`);
/** The compiled failure converters (the SDK requires them by path, like the prebuilt workflow bundle). */
export const failureConverterPath = compiled('failure-converter');
export const workflowFailureConverterPath = compiled('workflow-failure-converter');

/** What the client and the worker convert with: encrypted payloads, failure messages inside them. */
export function encryptingDataConverter(codec: PayloadEncryption): DataConverter {
  return { failureConverterPath, payloadCodecs: [codec] };
}
