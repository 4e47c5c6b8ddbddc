import type { OAuthActivities } from '../src/temporal/contracts/oauth.js';
import type { ActivityDeps } from './deps.js';

/** The OAuth flow's activities: the attempt workflow's timer outcomes, and one token refresh. */
export function createOAuthActivities({ services }: ActivityDeps): OAuthActivities {
  const { oauth, oauthTokens } = services;
  return {
    expireOAuthAttempt: ({ attemptId }) => oauth.expire(attemptId),
    abandonOAuthAttempt: ({ attemptId }) => oauth.abandon(attemptId),
    refreshOAuthTokens: ({ credentialId, generation }) => oauthTokens.refresh(credentialId, generation),
  };
}
