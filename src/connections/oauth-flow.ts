import { randomUUID } from 'node:crypto';
import { canUseWorkspace, hasGrant } from '../auth/access.js';
import type { AuthContext } from '../domain/auth-context.js';
import { DomainError } from '../errors.js';
import type { Logger } from '../logging/logger.js';
import type { ConnectionRepo } from '../store/connection-repo.js';
import type { OAuthRepo } from '../store/oauth-repo.js';
import type { SmokeTestRunner } from './connection-service.js';
import type { CredentialVault } from './credential-vault.js';
import { oauthSettings } from './oauth-credential.js';
import type { OAuthEvents } from './oauth-events.js';
import {
  authorizationUrl,
  describeRejection,
  randomSecret,
  sha256Hex,
  type OAuthTokenEndpoint,
  type TokenAnswer,
} from './oauth-provider.js';
import type { OAuthTemporal } from './oauth-temporal.js';
import type { OAuthTokens } from './oauth-tokens.js';
import type { OAuthAttempt, OAuthAttemptStatus } from '../domain/oauth-attempts.js';
import type { Connection, StoredCredential } from '../domain/connections.js';

/** The contract's connection token validity. */
export const CONNECTION_TOKEN_TTL_MS = 10 * 60_000;
/** How long a token exchange that started just before the 10-minute mark may still take. */
const EXCHANGE_GRACE_MS = 2 * 60_000;

/** The path the provider redirects the person's browser to (under the service's public URL). */
export const oauthCallbackPath = '/api/v1/oauth/callback';

export interface OAuthFlowDeps {
  attempts: OAuthRepo;
  connections: ConnectionRepo;
  vault: CredentialVault;
  endpoint: OAuthTokenEndpoint;
  tokens: OAuthTokens;
  temporal: OAuthTemporal;
  events: OAuthEvents;
  runSmokeTest: SmokeTestRunner;
  /** The service's public URL (configured, or the bound address; never a request's Host header). */
  publicUrl: () => string;
  logger: Logger;
}

export interface AuthorizationStart {
  authorizationUrl: string;
  connectionToken: string;
}

/** GET /integration/connect/{token}: the outcome, and the connection once there is one. */
export interface ConnectionCheck {
  status: OAuthAttemptStatus;
  connection: Connection | null;
}

/** What the person's browser is shown after the provider's redirect. */
export interface CallbackOutcome {
  page: 'connected' | 'denied' | 'failed' | 'expired' | 'invalid';
  detail: string;
}

/** The provider's words travel into a page and a stored error: printable ASCII, bounded. */
const clip = (text: string) => text.replace(/[^\x20-\x7e]/g, '?').slice(0, 200);

/**
 * The OAuth authorization flow: an attempt per connect (or
 * re-authorization) with a 10-minute connection token, the provider's
 * redirect (state checked and used once, code exchanged with the PKCE
 * verifier through the outbound policy, tokens sealed), and the check
 * endpoint's view of an attempt.
 */
export class OAuthFlow {
  constructor(private readonly deps: OAuthFlowDeps) {}

  redirectUri(): string {
    return `${this.deps.publicUrl()}${oauthCallbackPath}`;
  }

  /** A new attempt for the connection: the URL to send the person to and the token to poll with. */
  async begin(connection: Connection, credential: StoredCredential): Promise<AuthorizationStart> {
    const { attempts, vault, temporal, events } = this.deps;
    const settings = oauthSettings(vault.open(credential));
    const id = randomUUID();
    const connectionToken = randomSecret();
    const state = randomSecret();
    const verifier = randomSecret();
    const redirectUri = this.redirectUri();
    const now = Date.now();
    await attempts.create({
      id,
      connectionId: connection.id,
      credentialId: credential.id,
      organizationId: connection.organizationId,
      workspaceId: connection.workspaceId,
      tokenHash: sha256Hex(connectionToken),
      stateHash: sha256Hex(state),
      verifierCiphertext: vault.sealForAttempt(id, verifier),
      redirectUri,
      expiresAt: new Date(now + CONNECTION_TOKEN_TTL_MS).toISOString(),
      createdAt: new Date(now).toISOString(),
    });
    await temporal.startAttempt({
      attemptId: id,
      expiresInMs: CONNECTION_TOKEN_TTL_MS,
      exchangeGraceMs: EXCHANGE_GRACE_MS,
    });
    events.emit('authorization_started', {
      attemptId: id,
      connectionId: connection.id,
      organizationId: connection.organizationId,
      workspaceId: connection.workspaceId,
    });
    return { authorizationUrl: authorizationUrl(settings, { state, verifier, redirectUri }), connectionToken };
  }

  /**
   * The contract's check: 403 without Integration: Read anywhere; `expired`
   * for an unknown token, another organization's, or one of a workspace the
   * key cannot read (indistinguishable on purpose); ids once succeeded.
   */
  async check(auth: AuthContext, connectionToken: string): Promise<ConnectionCheck> {
    const readsSomewhere =
      hasGrant(auth, 'integration:read') && (auth.scope.type === 'organization' || auth.scope.workspaceIds.length > 0);
    if (!readsSomewhere) throw DomainError.forbidden('This API key lacks Integration: Read in every workspace');
    const attempt = await this.deps.attempts.findByTokenHash(sha256Hex(connectionToken));
    if (
      !attempt ||
      !canUseWorkspace(auth, { id: attempt.workspaceId, organizationId: attempt.organizationId }, 'integration:read')
    )
      return { status: 'expired', connection: null };
    const status = effectiveStatus(attempt, new Date().toISOString());
    if (status !== 'succeeded') return { status, connection: null };
    const connection = await this.deps.connections.find(attempt.connectionId);
    return { status, connection: connection ?? null };
  }

  /** The provider's redirect. Nothing changes unless the state is a pending attempt's, used here for the first time. */
  async callback(query: {
    state?: string;
    code?: string;
    error?: string;
    error_description?: string;
  }): Promise<CallbackOutcome> {
    const { attempts } = this.deps;
    if (!query.state) return { page: 'invalid', detail: 'The link carries no state.' };
    const stateHash = sha256Hex(query.state);
    const now = new Date().toISOString();
    if (!(await attempts.claim(stateHash, now))) {
      const known = await attempts.findByStateHash(stateHash);
      if (known && effectiveStatus(known, now) === 'expired')
        return { page: 'expired', detail: 'The 10 minutes to authorize have passed. Start the connection again.' };
      return { page: 'invalid', detail: 'This authorization link is unknown or was already used.' };
    }
    const attempt = await attempts.findByStateHash(stateHash);
    if (!attempt) return { page: 'invalid', detail: 'This authorization link is unknown or was already used.' };
    if (query.error !== undefined) {
      const reason = clip(query.error_description ? `${query.error}: ${query.error_description}` : query.error);
      await this.fail(attempt, `The provider reported ${reason}`);
      return query.error === 'access_denied'
        ? { page: 'denied', detail: 'Consent was denied: nothing was connected.' }
        : { page: 'failed', detail: `The provider reported an error: ${reason}` };
    }
    if (!query.code) {
      await this.fail(attempt, 'The provider redirected without a code');
      return { page: 'failed', detail: 'The provider sent no authorization code.' };
    }
    return this.exchange(attempt, query.code);
  }

  /** The code for tokens, then the connection goes live; any failure ends the attempt as failed. */
  private async exchange(attempt: OAuthAttempt, code: string): Promise<CallbackOutcome> {
    const { connections, vault, endpoint, tokens, temporal, attempts, events } = this.deps;
    const credential = await connections.findCredential(attempt.credentialId);
    if (!credential) {
      await this.fail(attempt, 'The credential no longer exists');
      return { page: 'failed', detail: 'The connection no longer exists.' };
    }
    const answer: TokenAnswer = await endpoint.exchangeCode(oauthSettings(vault.open(credential)), {
      code,
      verifier: vault.openForAttempt(attempt.id, attempt.verifierCiphertext),
      redirectUri: attempt.redirectUri,
    });
    if (answer.kind !== 'tokens') {
      const reason =
        answer.kind === 'rejected'
          ? `the provider rejected the token exchange: ${describeRejection(answer)}`
          : answer.kind === 'refused'
            ? `the token URL is refused by the outbound policy: ${answer.reason}`
            : `the token endpoint could not be reached: ${answer.reason}`;
      await this.fail(attempt, `Authorization failed: ${reason}`);
      return { page: 'failed', detail: `Authorization failed: ${reason}.` };
    }
    const meta = await tokens.store(credential.id, answer.tokens);
    await connections.moveStatusByCredential(
      credential.id,
      ['pending_authorization', 'needs_reauthorization'],
      'connected',
    );
    try {
      await temporal.tokensReplaced(credential.id, meta);
    } catch (err) {
      // The tokens are stored: the first action that needs a newer token starts the refresh workflow.
      this.deps.logger.error({ err, credentialId: credential.id }, 'OAuth refresh workflow not started');
    }
    const connection = await connections.find(attempt.connectionId);
    if (connection?.testActionVersionId && connection.status === 'connected')
      await this.deps.runSmokeTest(connection.id, undefined);
    if (await attempts.finish(attempt.id, 'succeeded', null)) {
      events.emit('authorization_succeeded', eventFields(attempt));
      await temporal.signalAttempt(attempt.id, { status: 'succeeded' });
    }
    return { page: 'connected', detail: 'The connection is authorized. You can close this window.' };
  }

  private async fail(attempt: OAuthAttempt, reason: string): Promise<void> {
    if (!(await this.deps.attempts.finish(attempt.id, 'failed', reason))) return;
    this.deps.events.emit('authorization_failed', { ...eventFields(attempt), reason });
    await this.deps.temporal.signalAttempt(attempt.id, { status: 'failed' });
  }

  /** The attempt workflow's timer: expired unless claimed; the status afterwards. */
  async expire(attemptId: string): Promise<OAuthAttemptStatus> {
    const { attempts, events } = this.deps;
    const attempt = await attempts.find(attemptId);
    if (!attempt) return 'expired';
    if (await attempts.finish(attemptId, 'expired', 'Nobody authorized within 10 minutes')) {
      events.emit('authorization_expired', eventFields(attempt));
      return 'expired';
    }
    return (await attempts.find(attemptId))?.status ?? 'expired';
  }

  /** A claimed exchange that never finished (the API process died mid-way): failed. */
  async abandon(attemptId: string): Promise<OAuthAttemptStatus> {
    const attempt = await this.deps.attempts.find(attemptId);
    if (!attempt) return 'failed';
    await this.fail(attempt, 'The token exchange did not finish');
    return (await this.deps.attempts.find(attemptId))?.status ?? 'failed';
  }
}

/** Pending past its expiry without a redirect is expired, whether or not the workflow's timer has recorded it. */
function effectiveStatus(attempt: OAuthAttempt, now: string): OAuthAttemptStatus {
  return attempt.status === 'pending' && attempt.claimedAt === null && attempt.expiresAt <= now
    ? 'expired'
    : attempt.status;
}

function eventFields(attempt: OAuthAttempt) {
  return {
    attemptId: attempt.id,
    connectionId: attempt.connectionId,
    organizationId: attempt.organizationId,
    workspaceId: attempt.workspaceId,
  };
}
