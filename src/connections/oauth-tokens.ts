import type { ConnectionRepo } from '../store/connection-repo.js';
import type { CredentialData } from './credential-data.js';
import type { CredentialVault } from './credential-vault.js';
import { accessTokenFresh, oauthSettings, tokenMeta, withTokens, type TokenSet } from './oauth-credential.js';
import type { OAuthEvents } from './oauth-events.js';
import { describeRejection, type OAuthTokenEndpoint } from './oauth-provider.js';
import { OAuthRefreshUnavailable, type OAuthTemporal } from './oauth-temporal.js';
import type { RefreshOutcome, TokenMeta } from '../temporal/contracts/oauth.js';
import type { StoredCredential } from '../domain/connections.js';

/** An access token this close to expiry is not handed to an action: it asks for a newer one first. */
const ACTION_SKEW_MS = 60_000;

export interface OAuthTokensDeps {
  connections: ConnectionRepo;
  vault: CredentialVault;
  endpoint: OAuthTokenEndpoint;
  temporal: OAuthTemporal;
  events: OAuthEvents;
}

/**
 * A credential's OAuth tokens: written (sealed, compare-and-set on the
 * generation, so a stale writer never overwrites newer tokens), refreshed by
 * the refresh workflow's activity, and read by actions, which ask the
 * workflow when they find the access token expired.
 */
export class OAuthTokens {
  constructor(private readonly deps: OAuthTokensDeps) {}

  /**
   * Seals `tokens` into the credential as the next generation (after an
   * authorization: whatever is held is replaced); the new generation's meta.
   */
  async store(credentialId: string, tokens: TokenSet): Promise<TokenMeta> {
    const { connections, vault } = this.deps;
    for (;;) {
      const credential = await connections.findCredential(credentialId);
      if (!credential) throw new Error(`Credential ${credentialId} does not exist`);
      const next = withTokens(vault.open(credential), tokens);
      if (await connections.writeTokens(credential.id, credential.tokenGeneration, vault.seal(credential, next)))
        return tokenMeta(next, credential.tokenGeneration + 1);
    }
  }

  /**
   * One refresh (the refresh workflow's activity): the refresh token is sent
   * to the token endpoint and the answer (access token and, when rotated, the
   * new refresh token) saved in one write.
   */
  async refresh(credentialId: string, generation: number): Promise<RefreshOutcome> {
    const { connections, vault, endpoint, events } = this.deps;
    const credential = await connections.findCredential(credentialId);
    if (!credential || !(await connections.credentialInUse(credentialId))) return { kind: 'unused' };
    const data = vault.open(credential);
    if (credential.tokenGeneration !== generation)
      return { kind: 'superseded', tokens: tokenMeta(data, credential.tokenGeneration) };
    const fields = { credentialId, organizationId: credential.organizationId, workspaceId: credential.workspaceId };
    if (typeof data.refresh_token !== 'string' || data.refresh_token === '')
      return this.needsReauthorization(credential, 'the provider gave no refresh token and the access token expired');
    const answer = await endpoint.refresh(oauthSettings(data), data.refresh_token);
    switch (answer.kind) {
      case 'tokens': {
        const next = withTokens(data, answer.tokens);
        if (!(await connections.writeTokens(credentialId, generation, vault.seal(credential, next)))) {
          // A re-authorization wrote newer tokens while this request was out: they win.
          const latest = await connections.findCredential(credentialId);
          return latest
            ? { kind: 'superseded', tokens: tokenMeta(vault.open(latest), latest.tokenGeneration) }
            : { kind: 'unused' };
        }
        events.emit('token_refreshed', fields);
        return { kind: 'refreshed', tokens: tokenMeta(next, generation + 1) };
      }
      case 'rejected':
        return this.needsReauthorization(
          credential,
          `the provider refused the refresh token: ${describeRejection(answer)}`,
        );
      case 'unavailable':
      case 'refused': {
        const reason = answer.kind === 'refused' ? `refused by the outbound policy: ${answer.reason}` : answer.reason;
        events.emit('refresh_failed', { ...fields, reason });
        return { kind: 'transient', reason: `the token endpoint could not be used: ${reason}` };
      }
    }
  }

  private async needsReauthorization(credential: StoredCredential, reason: string): Promise<RefreshOutcome> {
    const moved = await this.deps.connections.moveStatusByCredential(
      credential.id,
      ['connected'],
      'needs_reauthorization',
    );
    for (const connectionId of moved.length > 0 ? moved : [undefined])
      this.deps.events.emit('needs_reauthorization', {
        connectionId,
        credentialId: credential.id,
        organizationId: credential.organizationId,
        workspaceId: credential.workspaceId,
        reason,
      });
    return { kind: 'needs_reauthorization', reason };
  }

  /**
   * The credential's data with a usable access token, for an action: as
   * stored while it is fresh, else after the refresh workflow obtained a
   * newer one (the one refresh in flight, shared by every action asking).
   * Throws OAuthNeedsReauthorization or OAuthRefreshUnavailable.
   */
  async forAction(credential: StoredCredential): Promise<CredentialData> {
    const { connections, vault, temporal } = this.deps;
    const data = vault.open(credential);
    if (accessTokenFresh(data, Date.now(), ACTION_SKEW_MS)) return data;
    await temporal.requestNewerTokens(credential.id, tokenMeta(data, credential.tokenGeneration));
    const latest = await connections.findCredential(credential.id);
    const refreshed = latest && vault.open(latest);
    if (!refreshed || !accessTokenFresh(refreshed, Date.now(), 0))
      throw new OAuthRefreshUnavailable('the provider issued no access token that is still valid');
    return refreshed;
  }
}
