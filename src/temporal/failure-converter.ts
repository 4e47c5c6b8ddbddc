import { PayloadEncryptionError } from './payload-encryption.js';
import { sealingFailureConverter } from './workflow-failure-converter.js';

/**
 * The worker's and the client's (activity errors quote URLs and data: all sealed). A payload no key
 * of the ring opens fails the workflow task with the key id in clear, so the operator sees which key
 * to put back. Told by name: this module is loaded by path, possibly beside another copy of the codec's.
 */
export const failureConverter = sealingFailureConverter(
  (err) => err instanceof Error && err.name === PayloadEncryptionError.name,
);
