import { createHash, randomBytes } from 'node:crypto';
import { OutboundRefusedError, type Outbound } from '../net/outbound.js';
import type { OAuthClientSettings, TokenSet } from './oauth-credential.js';

/** 32 random bytes, base64url: connection tokens, states and PKCE verifiers (43 characters, RFC 7636 4.1). */
export const randomSecret = (): string => randomBytes(32).toString('base64url');

/** SHA-256 hex: how connection tokens and states are stored and looked up. */
export const sha256Hex = (value: string): string => createHash('sha256').update(value, 'utf8').digest('hex');

/** The PKCE S256 challenge of a verifier (RFC 7636 4.2). */
export const pkceChallenge = (verifier: string): string =>
  createHash('sha256').update(verifier, 'ascii').digest('base64url');

/** The provider's authorization URL for one attempt (authorization code, PKCE S256). */
export function authorizationUrl(
  settings: OAuthClientSettings,
  attempt: { state: string; verifier: string; redirectUri: string },
): string {
  const url = new URL(settings.authorizationUrl);
  for (const [name, value] of Object.entries(settings.authorizationParams)) url.searchParams.set(name, value);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', settings.clientId);
  url.searchParams.set('redirect_uri', attempt.redirectUri);
  if (settings.scopes.length > 0) url.searchParams.set('scope', settings.scopes.join(' '));
  url.searchParams.set('state', attempt.state);
  url.searchParams.set('code_challenge', pkceChallenge(attempt.verifier));
  url.searchParams.set('code_challenge_method', 'S256');
  return url.toString();
}

/**
 * How a token request ended: tokens; `rejected` when the provider answered
 * with an OAuth error (RFC 6749 5.2: invalid_grant and the like, which no
 * retry cures); `unavailable` for 5xx, 429, timeouts and network errors
 * (worth retrying); `refused` when the outbound policy forbids the URL.
 */
export type TokenAnswer =
  | { kind: 'tokens'; tokens: TokenSet }
  | { kind: 'rejected'; error: string; description: string | null }
  | { kind: 'unavailable'; reason: string }
  | { kind: 'refused'; reason: string };

/** Bytes of a token endpoint's answer read; a token response is small. */
const MAX_ANSWER_BYTES = 64 * 1024;
/** What an error code or description may carry into a message (they come from outside). */
const MAX_ERROR_CHARS = 200;

const clip = (text: string) => text.replace(/[^\x20-\x7e]/g, '?').slice(0, MAX_ERROR_CHARS);

/**
 * The provider's token endpoint, always through the outbound policy (the
 * token URL is tenant-supplied): code exchange and refresh, client
 * authentication by the credential's method, the answer classified.
 */
export class OAuthTokenEndpoint {
  constructor(
    private readonly outbound: Outbound,
    private readonly timeoutMs: number,
  ) {}

  exchangeCode(
    settings: OAuthClientSettings,
    grant: { code: string; verifier: string; redirectUri: string },
  ): Promise<TokenAnswer> {
    return this.request(settings, {
      grant_type: 'authorization_code',
      code: grant.code,
      redirect_uri: grant.redirectUri,
      code_verifier: grant.verifier,
    });
  }

  refresh(settings: OAuthClientSettings, refreshToken: string): Promise<TokenAnswer> {
    return this.request(settings, { grant_type: 'refresh_token', refresh_token: refreshToken });
  }

  private async request(settings: OAuthClientSettings, params: Record<string, string>): Promise<TokenAnswer> {
    const form = new URLSearchParams(params);
    const headers: Record<string, string> = {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
      'user-agent': 'caseflow-oauth',
    };
    if (settings.tokenAuthMethod === 'client_secret_post') {
      form.set('client_id', settings.clientId);
      form.set('client_secret', settings.clientSecret);
    } else {
      // RFC 6749 2.3.1: both parts form-encoded before base64.
      const pair = `${encodeURIComponent(settings.clientId)}:${encodeURIComponent(settings.clientSecret)}`;
      headers.authorization = `Basic ${Buffer.from(pair).toString('base64')}`;
    }
    const startedAt = Date.now();
    let status: number;
    let body: string;
    try {
      ({ status, body } = await this.outbound.request(settings.tokenUrl, {
        method: 'POST',
        headers,
        body: form.toString(),
        timeoutMs: this.timeoutMs,
        maxResponseBytes: MAX_ANSWER_BYTES,
      }));
    } catch (err) {
      if (err instanceof OutboundRefusedError) return { kind: 'refused', reason: err.message };
      return { kind: 'unavailable', reason: `network error: ${err instanceof Error ? clip(err.message) : 'unknown'}` };
    }
    return classify(status, body, startedAt);
  }
}

function parseJson(body: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(body);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function classify(status: number, body: string, startedAt: number): TokenAnswer {
  if (status >= 500 || status === 429 || status === 408)
    return { kind: 'unavailable', reason: `the token endpoint answered HTTP ${status}` };
  const json = parseJson(body);
  if (status >= 200 && status < 300 && typeof json?.access_token === 'string' && json.access_token !== '') {
    const expiresIn = Number(json.expires_in);
    const tokens: TokenSet = {
      access_token: json.access_token,
      token_type: typeof json.token_type === 'string' ? json.token_type : 'Bearer',
      obtained_at: new Date(startedAt).toISOString(),
    };
    if (typeof json.refresh_token === 'string' && json.refresh_token !== '') tokens.refresh_token = json.refresh_token;
    // Measured from before the request was sent, so a slow answer never makes the token look fresher than it is.
    if (Number.isFinite(expiresIn) && expiresIn > 0)
      tokens.expires_at = new Date(startedAt + expiresIn * 1000).toISOString();
    if (typeof json.scope === 'string') tokens.scope = json.scope;
    return { kind: 'tokens', tokens };
  }
  if (typeof json?.error === 'string')
    return {
      kind: 'rejected',
      error: clip(json.error),
      description: typeof json.error_description === 'string' ? clip(json.error_description) : null,
    };
  return {
    kind: 'rejected',
    error: 'invalid_response',
    description: `HTTP ${status} without an access_token or an OAuth error`,
  };
}

/** A rejection as one line for a person or a log (the provider's words, clipped). */
export function describeRejection(answer: { error: string; description: string | null }): string {
  return answer.description ? `${answer.error}: ${answer.description}` : answer.error;
}
