/**
 * Every Temporal workflow the worker runs, one file each; the prebuilt
 * bundle (dist/workflow-bundle.js) is made from this module.
 */
export { callbackDelivery } from './callback-delivery.js';
export { caseRun, caseProgressQuery } from './case-run.js';
export { generationRun, generationRunQuery, cancelGenerationSignal } from './generation-run.js';
export { connectionSmokeTest } from './connection-smoke-test.js';
export { oauthAuthorization, oauthCallbackSignal } from './oauth-authorization.js';
export {
  oauthTokenRefresh,
  oauthTokensReplacedSignal,
  oauthAccessTokenUpdate,
  oauthRefreshStatusQuery,
} from './oauth-token-refresh.js';
