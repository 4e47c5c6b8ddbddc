import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  defineSignal,
  defineUpdate,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import {
  needsReauthorizationType,
  oauthAccessTokenUpdateName,
  oauthTokensReplacedSignalName,
  refreshUnavailableType,
  type AccessTokenAnswer,
  type AccessTokenRequest,
  type OAuthActivities,
  type OAuthRefreshInput,
  type RefreshOutcome,
  type TokenMeta,
} from '../src/connections/oauth-types.js';

export const oauthTokensReplacedSignal = defineSignal<[TokenMeta]>(oauthTokensReplacedSignalName);
export const oauthAccessTokenUpdate = defineUpdate<AccessTokenAnswer, [AccessTokenRequest]>(oauthAccessTokenUpdateName);

/** When the next refresh is due (epoch ms), or null when nothing is to be done until something happens. */
export function nextRefreshAt(state: OAuthRefreshInput): number | null {
  if (state.needsReauthorization) return null;
  if (state.retryAt !== null) return state.retryAt;
  const { tokens, settings } = state;
  // Without a refresh token there is nothing to refresh: at expiry the activity says re-authorization is needed.
  if (!tokens.refreshable) return tokens.expiresAt;
  const idle = tokens.obtainedAt + settings.idleRefreshMs;
  if (tokens.expiresAt === null) return idle;
  const lifetime = Math.max(0, tokens.expiresAt - tokens.obtainedAt);
  const margin = Math.min(settings.marginMs, lifetime * settings.marginFraction);
  return Math.min(tokens.expiresAt - margin, idle);
}

/**
 * One per OAuth credential (`oauth-refresh-<credentialId>`), for as long as a
 * connection uses it: the single writer of its tokens. It refreshes ahead of
 * expiry (and at least daily), and actions that find the access token expired
 * ask it for a newer one through an update: however many ask at once, one
 * token request is made, and all of them wait for it. invalid_grant (or any
 * OAuth error) leaves it waiting for a re-authorization; 5xx and timeouts are
 * retried with backoff, without end. It continues as new every
 * `refreshesPerRun` refreshes, so its history stays short.
 */
export async function oauthTokenRefresh(input: OAuthRefreshInput): Promise<void> {
  const state: OAuthRefreshInput = { ...input };
  const { settings } = state;
  const { refreshOAuthTokens } = proxyActivities<OAuthActivities>({
    startToCloseTimeout: settings.requestTimeoutMs + 15_000,
    // The activity's own failures (store down); the provider's are answered as outcomes and retried below.
    retry: { initialInterval: '2s', maximumAttempts: 3 },
  });
  /** The highest generation an action saw expired: a refresh is wanted while the tokens are not newer. */
  let wantedAbove = -1;
  /** Rounds that ended without new tokens, so waiting actions learn of the failure. */
  let failedRounds = 0;
  /** Set by the signal (an object, so the loop reads what the handler wrote). */
  const pending = { replaced: false };
  const wanted = () => wantedAbove >= state.tokens.generation && !state.needsReauthorization;

  setHandler(oauthTokensReplacedSignal, (tokens) => {
    if (tokens.generation <= state.tokens.generation) return;
    Object.assign(state, { tokens, needsReauthorization: false, failures: 0, retryAt: null, lastError: null });
    pending.replaced = true;
  });

  setHandler(oauthAccessTokenUpdate, async ({ seenGeneration }) => {
    const round = failedRounds;
    wantedAbove = Math.max(wantedAbove, seenGeneration);
    await condition(
      () => state.tokens.generation > seenGeneration || state.needsReauthorization || failedRounds > round,
    );
    if (state.tokens.generation > seenGeneration) return { generation: state.tokens.generation };
    throw ApplicationFailure.create({
      type: state.needsReauthorization ? needsReauthorizationType : refreshUnavailableType,
      message: state.lastError ?? 'no new token was obtained',
      nonRetryable: true,
    });
  });

  /** Applies a round's outcome to the state; false when the workflow is to end. */
  const apply = (outcome: RefreshOutcome): boolean => {
    switch (outcome.kind) {
      case 'refreshed':
      case 'superseded':
        if (outcome.tokens.generation > state.tokens.generation)
          Object.assign(state, { tokens: outcome.tokens, failures: 0, retryAt: null, lastError: null });
        else failedRounds += 1;
        return true;
      case 'needs_reauthorization':
        Object.assign(state, { needsReauthorization: true, retryAt: null, lastError: outcome.reason });
        return true;
      case 'unused':
        Object.assign(state, { needsReauthorization: true, lastError: 'no connection uses this credential any more' });
        return false;
      case 'transient': {
        state.failures += 1;
        const backoff = Math.min(settings.retryInitialMs * 2 ** (state.failures - 1), settings.retryMaxMs);
        Object.assign(state, { retryAt: Date.now() + backoff, lastError: outcome.reason });
        failedRounds += 1;
        return true;
      }
    }
  };

  let refreshes = 0;
  for (;;) {
    const dueAt = nextRefreshAt(state);
    const woken = () => wanted() || pending.replaced;
    if (dueAt === null) await condition(woken);
    else await condition(woken, Math.max(1, dueAt - Date.now()));
    if (pending.replaced) {
      pending.replaced = false;
      continue;
    }
    let outcome: RefreshOutcome;
    try {
      outcome = await refreshOAuthTokens({ credentialId: state.credentialId, generation: state.tokens.generation });
    } catch {
      outcome = { kind: 'transient', reason: 'the refresh activity failed' };
    }
    if (!apply(outcome)) {
      await condition(allHandlersFinished);
      return;
    }
    refreshes += 1;
    if (refreshes >= settings.refreshesPerRun || workflowInfo().continueAsNewSuggested) {
      // An action asking meanwhile is served first (by the next round); the new run starts with none waiting.
      await condition(() => allHandlersFinished() || wanted());
      if (allHandlersFinished()) await continueAsNew<typeof oauthTokenRefresh>(state);
    }
  }
}
