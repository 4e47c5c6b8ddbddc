import { condition, proxyActivities, setHandler } from '@temporalio/workflow';
import type { WorkflowOf } from '../src/temporal/contracts/contract.js';
import {
  oauthCallbackSignal,
  type OAuthActivities,
  type oauthAuthorizationContract,
  type OAuthCallbackSignal,
} from '../src/temporal/contracts/oauth.js';

/**
 * One OAuth authorization attempt (`oauth-<attemptId>`): it waits for the
 * redirect endpoint's signal or the 10-minute timer. The redirect endpoint
 * records succeeded/failed in the store itself; the timer records expired,
 * unless the provider's redirect claimed the attempt just in time, in which
 * case the exchange gets `exchangeGraceMs` to finish before it is failed.
 */
export const oauthAuthorization: WorkflowOf<typeof oauthAuthorizationContract> = async function oauthAuthorization(
  input,
) {
  const { expireOAuthAttempt, abandonOAuthAttempt } = proxyActivities<OAuthActivities>({
    startToCloseTimeout: '30s',
    retry: { initialInterval: '2s', maximumInterval: '1m' },
  });
  const received: { status?: OAuthCallbackSignal['status'] } = {};
  setHandler(oauthCallbackSignal, (signal) => {
    received.status = signal.status;
  });
  if (await condition(() => received.status !== undefined, input.expiresInMs)) return received.status ?? 'failed';
  const status = await expireOAuthAttempt({ attemptId: input.attemptId });
  if (status !== 'pending') return status;
  if (await condition(() => received.status !== undefined, input.exchangeGraceMs)) return received.status ?? 'failed';
  return abandonOAuthAttempt({ attemptId: input.attemptId });
};
