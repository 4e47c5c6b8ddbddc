import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type {
  AccessTokenAnswer,
  AccessTokenRequest,
  OAuthAttemptStatus,
  OAuthAuthorizationInput,
  OAuthCallbackSignal,
  OAuthRefreshInput,
  OAuthRefreshStatus,
  TokenMeta,
} from '../../connections/oauth-types.js';
import { workflowContract } from './contract.js';

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
