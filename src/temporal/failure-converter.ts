import { DefaultFailureConverter } from '@temporalio/common';

/**
 * Failure messages and stack traces go into the failure's encoded attributes, a payload the codec
 * encrypts, instead of plain text in the history (a Python node's error can quote a case's data).
 * Loaded by path: bundled into the workflow code (scripts/bundle-workflows.ts) and required by the
 * worker and the client (src/temporal/data-converter.ts). Deterministic, so workflow code may load it.
 */
export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
