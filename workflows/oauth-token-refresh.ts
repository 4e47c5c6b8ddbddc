import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { WorkflowOf } from '../src/temporal/contracts/contract.js';
import {
  needsReauthorizationType,
  oauthAccessTokenUpdate,
  oauthRefreshStatusQuery,
  oauthTokensReplacedSignal,
  refreshUnavailableType,
  type OAuthActivities,
  type oauthTokenRefreshContract,
  type RefreshOutcome,
  type RefreshSettings,
  type TokenMeta,
} from '../src/temporal/contracts/oauth.js';

/** A token set anchored on the workflow's clock (epoch ms of workflow time). */
export interface PlannedTokens {
  generation: number;
  expiresAt: number | null;
  lifetimeMs: number | null;
  receivedAt: number;
  refreshable: boolean;
}

const plan = (meta: TokenMeta, now: number): PlannedTokens => ({
  generation: meta.generation,
  expiresAt: meta.expiresInMs === null ? null : now + meta.expiresInMs,
  lifetimeMs: meta.lifetimeMs,
  receivedAt: now,
  refreshable: meta.refreshable,
});

/**
 * When the tokens are due for a refresh: the margin before expiry is
 * `marginMs` or `marginFraction` of their lifetime, whichever is shorter, and
 * an idle credential is refreshed at least every `idleRefreshMs`. Without a
 * refresh token, the expiry itself (the activity then reports that a
 * re-authorization is needed).
 */
export function refreshDueAt(tokens: PlannedTokens, settings: RefreshSettings): number | null {
  if (!tokens.refreshable) return tokens.expiresAt;
  const idle = tokens.receivedAt + settings.idleRefreshMs;
  if (tokens.expiresAt === null) return idle;
  const lifetime = Math.max(0, tokens.lifetimeMs ?? tokens.expiresAt - tokens.receivedAt);
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
export const oauthTokenRefresh: WorkflowOf<typeof oauthTokenRefreshContract> = async function oauthTokenRefresh(input) {
  const { settings, credentialId } = input;
  let tokens = plan(input.tokens, Date.now());
  let needsReauthorization = input.needsReauthorization;
  let failures = input.failures;
  let retryAt = input.retryAt;
  let lastError = input.lastError;
  const { refreshOAuthTokens } = proxyActivities<OAuthActivities>({
    startToCloseTimeout: settings.requestTimeoutMs + 15_000,
    // The activity's own failures (store down); the provider's are answered as outcomes and retried below.
    retry: { initialInterval: '2s', maximumAttempts: 3 },
  });
  /** The highest generation an action saw expired: a refresh is wanted while the tokens are not newer. */
  let wantedAbove = -1;
  /** Rounds that ended without new tokens, so waiting actions learn of the failure. */
  let failedRounds = 0;
  let waiting = 0;
  /** Set by the signal (an object, so the loop reads what the handler wrote). */
  const pending = { replaced: false };
  const wanted = () => wantedAbove >= tokens.generation && !needsReauthorization;
  const accept = (meta: TokenMeta) => {
    tokens = plan(meta, Date.now());
    needsReauthorization = false;
    failures = 0;
    retryAt = null;
    lastError = null;
  };

  setHandler(oauthTokensReplacedSignal, (meta) => {
    if (meta.generation <= tokens.generation) return;
    accept(meta);
    pending.replaced = true;
  });

  setHandler(oauthAccessTokenUpdate, async ({ seenGeneration }) => {
    const round = failedRounds;
    wantedAbove = Math.max(wantedAbove, seenGeneration);
    waiting += 1;
    try {
      await condition(() => tokens.generation > seenGeneration || needsReauthorization || failedRounds > round);
    } finally {
      waiting -= 1;
    }
    if (tokens.generation > seenGeneration) return { generation: tokens.generation };
    throw ApplicationFailure.create({
      type: needsReauthorization ? needsReauthorizationType : refreshUnavailableType,
      message: lastError ?? 'no new token was obtained',
      nonRetryable: true,
    });
  });

  const nextRefreshAt = (): number | null =>
    needsReauthorization ? null : (retryAt ?? refreshDueAt(tokens, settings));

  setHandler(oauthRefreshStatusQuery, () => ({
    generation: tokens.generation,
    needsReauthorization,
    failures,
    lastError,
    nextRefreshAt: nextRefreshAt(),
    waiting,
  }));

  /** Applies a round's outcome; false when the workflow is to end. */
  const apply = (outcome: RefreshOutcome): boolean => {
    switch (outcome.kind) {
      case 'refreshed':
      case 'superseded':
        if (outcome.tokens.generation > tokens.generation) accept(outcome.tokens);
        else failedRounds += 1;
        return true;
      case 'needs_reauthorization':
        needsReauthorization = true;
        retryAt = null;
        lastError = outcome.reason;
        return true;
      case 'unused':
        needsReauthorization = true;
        lastError = 'no connection uses this credential any more';
        return false;
      case 'transient':
        failures += 1;
        retryAt = Date.now() + Math.min(settings.retryInitialMs * 2 ** (failures - 1), settings.retryMaxMs);
        lastError = outcome.reason;
        failedRounds += 1;
        return true;
    }
  };

  let refreshes = 0;
  for (;;) {
    const dueAt = nextRefreshAt();
    const woken = () => wanted() || pending.replaced;
    if (dueAt === null) await condition(woken);
    else await condition(woken, Math.max(1, dueAt - Date.now()));
    if (pending.replaced) {
      pending.replaced = false;
      continue;
    }
    let outcome: RefreshOutcome;
    try {
      outcome = await refreshOAuthTokens({ credentialId, generation: tokens.generation });
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
      if (allHandlersFinished()) {
        const now = Date.now();
        await continueAsNew<typeof oauthTokenRefresh>({
          credentialId,
          settings,
          needsReauthorization,
          failures,
          retryAt,
          lastError,
          tokens: {
            generation: tokens.generation,
            expiresInMs: tokens.expiresAt === null ? null : tokens.expiresAt - now,
            lifetimeMs: tokens.lifetimeMs,
            refreshable: tokens.refreshable,
          },
        });
      }
    }
  }
};
