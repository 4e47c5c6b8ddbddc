/**
 * Every Temporal workflow the worker runs, one file each; the prebuilt
 * bundle (dist/workflow-bundle.js) is made from this module. Their contracts
 * (type names, ids, signals, queries, updates) are in src/temporal/contracts.
 */
export { callbackDelivery } from './callback-delivery.js';
export { caseRun } from './case-run.js';
export { scheduledCase } from './scheduled-case.js';
export { generationRun } from './generation-run.js';
export { connectionSmokeTest } from './connection-smoke-test.js';
export { oauthAuthorization } from './oauth-authorization.js';
export { oauthTokenRefresh } from './oauth-token-refresh.js';
export { rerunBatch } from './rerun-batch.js';
export { retentionPurge } from './retention-purge.js';

// The SDK's promise hook takes a stack trace (a new Error, source-mapped frame by frame) of every promise workflow
// code creates, for the `__stack_trace` query (sdk-typescript#1587): about a quarter of a case's workflow CPU
// (docs/performance.md, fifteenth round). Workflow code's errors and that query carry no frames; activities keep
// theirs. Set once per workflow context: this module is preloaded (src/temporal/workflow-preload.ts).
Error.stackTraceLimit = 0;
