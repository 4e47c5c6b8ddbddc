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
