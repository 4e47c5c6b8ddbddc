import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { OAuthAttemptStatus } from '../../domain/oauth-attempts.js';
import { workflowContract } from './contract.js';

/*
 * Types shared by the OAuth flow's services, its activities and its two
 * workflows. Nothing here is a secret: Temporal carries ids, generations and
 * times, never a token.
 */

/** The attempt workflow's input: how long the person has, and how long a claimed exchange may still take. */
export interface OAuthAuthorizationInput {
  attemptId: string;
  expiresInMs: number;
  exchangeGraceMs: number;
}

/** Sent by the redirect endpoint once the outcome is recorded. */
export interface OAuthCallbackSignal {
  status: 'succeeded' | 'failed';
}

/**
 * What a credential's token set says about itself (no token): enough to plan
 * the next refresh. Times are relative, so the workflow anchors them on its
 * own clock (the worker's wall clock and workflow time may differ).
 */
export interface TokenMeta {
  generation: number;
  /** Time left before the access token expires, when the meta was made; null when the provider gave no expires_in. */
  expiresInMs: number | null;
  /** The token's whole lifetime (expires_in); null without one. */
  lifetimeMs: number | null;
  /** Whether a refresh token is held. */
  refreshable: boolean;
}

/** How the refresh workflow plans (from configuration, carried through continue-as-new). */
export interface RefreshSettings {
  /** Refresh this long before expiry at most... */
  marginMs: number;
  /** ...or this fraction of the token's lifetime when that is shorter. */
  marginFraction: number;
  /** An idle connection's tokens are refreshed at least this often. */
  idleRefreshMs: number;
  /** Refreshes per workflow run before it continues as new. */
  refreshesPerRun: number;
  /** Backoff between refresh rounds that failed for a transient reason (5xx, timeout). */
  retryInitialMs: number;
  retryMaxMs: number;
  /** Timeout of one token request (the activity's start-to-close adds room). */
  requestTimeoutMs: number;
}

/** The refresh workflow's whole state: its input, and what it continues as new with. */
export interface OAuthRefreshInput {
  credentialId: string;
  tokens: TokenMeta;
  needsReauthorization: boolean;
  /** Consecutive rounds that failed for a transient reason, and when the next one is due (epoch ms). */
  failures: number;
  retryAt: number | null;
  /** Why the last round failed (for the actions waiting on it). */
  lastError: string | null;
  settings: RefreshSettings;
}

/** What the refresh activity concluded. */
export type RefreshOutcome =
  | { kind: 'refreshed'; tokens: TokenMeta }
  /** Newer tokens were written meanwhile (a re-authorization): nothing was sent, or the answer was discarded. */
  | { kind: 'superseded'; tokens: TokenMeta }
  | { kind: 'needs_reauthorization'; reason: string }
  | { kind: 'transient'; reason: string }
  /** No live connection uses the credential any more: the workflow ends. */
  | { kind: 'unused' };

/** An action asks for a token newer than the generation it saw expired. */
export interface AccessTokenRequest {
  seenGeneration: number;
}

export interface AccessTokenAnswer {
  generation: number;
}

/** Failure types the refresh workflow's update answers with. */
export const needsReauthorizationType = 'OAuthNeedsReauthorization';
export const refreshUnavailableType = 'OAuthRefreshUnavailable';

/** The activities of the OAuth flow (activities/oauth.ts). */
export interface OAuthActivities {
  /** At the 10-minute mark: expired unless the redirect claimed it; the attempt's status afterwards. */
  expireOAuthAttempt(input: { attemptId: string }): Promise<OAuthAttemptStatus>;
  /** A claimed exchange that never finished: failed (unless recorded meanwhile); the status afterwards. */
  abandonOAuthAttempt(input: { attemptId: string }): Promise<OAuthAttemptStatus>;
  refreshOAuthTokens(input: { credentialId: string; generation: number }): Promise<RefreshOutcome>;
}

/** The refresh workflow's state as its query shows it (Temporal UI, operators, tests). */
export interface OAuthRefreshStatus {
  generation: number;
  needsReauthorization: boolean;
  failures: number;
  lastError: string | null;
  /** Workflow time (epoch ms) of the next refresh; null while waiting for a re-authorization. */
  nextRefreshAt: number | null;
  /** Actions waiting for a newer token. */
  waiting: number;
}

/** One authorization attempt: waits for the provider's redirect or 10 minutes (workflows/oauth-authorization.ts). */
export const oauthAuthorizationContract =
  workflowContract<(input: OAuthAuthorizationInput) => Promise<OAuthAttemptStatus>>('oauthAuthorization');
export const oauthAuthorizationWorkflowId = (attemptId: string) => `oauth-${attemptId}`;
/** The redirect's outcome, recorded in the store first. */
export const oauthCallbackSignal = defineSignal<[OAuthCallbackSignal]>('oauthCallback');

/** A credential's token refresher, for as long as the credential lives (workflows/oauth-token-refresh.ts). */
export const oauthTokenRefreshContract =
  workflowContract<(input: OAuthRefreshInput) => Promise<void>>('oauthTokenRefresh');
export const oauthRefreshWorkflowId = (credentialId: string) => `oauth-refresh-${credentialId}`;
/** New tokens from an authorization: the refresher plans from them. */
export const oauthTokensReplacedSignal = defineSignal<[TokenMeta]>('oauthTokensReplaced');
/** Tokens newer than the caller's, refreshed once for every caller waiting. */
export const oauthAccessTokenUpdate = defineUpdate<AccessTokenAnswer, [AccessTokenRequest]>('oauthAccessToken');
/** The refresher's state (Temporal UI, operators, tests). */
export const oauthRefreshStatusQuery = defineQuery<OAuthRefreshStatus>('oauthRefreshStatus');
