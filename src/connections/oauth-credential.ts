import type { CredentialData } from './credential-data.js';
import type { TokenMeta } from '../temporal/contracts/oauth.js';

/**
 * What an `oauth` credential holds, by name. The integration's author puts
 * the provider's endpoints (and usually the scopes) in the credential
 * template as input defaults; the workspace sends its client pair in
 * credentialData (and may set any editable input). Once authorized, the
 * provider's tokens are merged into the same sealed JSON document, so the
 * master key rotation covers them with no further code.
 */
export interface OAuthClientSettings {
  clientId: string;
  clientSecret: string;
  authorizationUrl: string;
  tokenUrl: string;
  scopes: string[];
  /** How the client authenticates at the token endpoint (RFC 6749 2.3.1); basic by default. */
  tokenAuthMethod: 'client_secret_basic' | 'client_secret_post';
  /** Extra query parameters for the authorization URL (e.g. access_type=offline); never the protocol's own. */
  authorizationParams: Record<string, string>;
}

/** Token fields written into the credential after authorization or a refresh. */
export interface TokenSet {
  access_token: string;
  refresh_token?: string;
  token_type: string;
  /** ISO 8601; absent when the provider gave no expires_in. */
  expires_at?: string;
  obtained_at: string;
  /** The scope the provider granted, when it said. */
  scope?: string;
}

/** Parameters the flow itself sets: authorization_params cannot override them. */
const protocolParams = new Set([
  'response_type',
  'client_id',
  'redirect_uri',
  'scope',
  'state',
  'code_challenge',
  'code_challenge_method',
]);

/** Values of these fields are kept from the action code: it gets the access token, not what mints new ones. */
const keptFromActions = new Set(['client_secret', 'refresh_token']);

const isHttpUrl = (value: unknown): value is string => {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
};

function scopesOf(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return [];
  if (typeof value === 'string') return value.split(/[\s,]+/).filter(Boolean);
  if (Array.isArray(value) && value.every((s): s is string => typeof s === 'string')) return value;
  return undefined;
}

function paramsOf(value: unknown): Record<string, string> | undefined {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) return undefined;
  const entries = Object.entries(value);
  if (!entries.every(([k, v]) => typeof v === 'string' && !protocolParams.has(k))) return undefined;
  return Object.fromEntries(entries as Array<[string, string]>);
}

/** The problems of an oauth credential's data, by field name (422 at connect; values never quoted). */
export function oauthSettingsProblems(data: CredentialData): Array<{ name: string; message: string }> {
  const problems: Array<{ name: string; message: string }> = [];
  for (const name of ['client_id', 'client_secret']) {
    const value = data[name];
    if (typeof value !== 'string' || value === '')
      problems.push({ name, message: 'is required for an OAuth credential' });
  }
  for (const name of ['authorization_url', 'token_url']) {
    if (!isHttpUrl(data[name]))
      problems.push({
        name,
        message: 'is required for an OAuth credential: an http(s) URL (a template default or credentialData)',
      });
  }
  if (scopesOf(data.scopes) === undefined)
    problems.push({ name: 'scopes', message: 'must be a string of space- or comma-separated scopes, or a list' });
  const method = data.token_auth_method;
  if (method !== undefined && method !== null && method !== 'client_secret_basic' && method !== 'client_secret_post')
    problems.push({ name: 'token_auth_method', message: 'must be client_secret_basic or client_secret_post' });
  if (paramsOf(data.authorization_params) === undefined)
    problems.push({
      name: 'authorization_params',
      message: `must be an object of string values, without ${[...protocolParams].join(', ')}`,
    });
  return problems;
}

/** The client settings of data that passed oauthSettingsProblems (checked at connect). */
export function oauthSettings(data: CredentialData): OAuthClientSettings {
  if (oauthSettingsProblems(data).length > 0) throw new Error('The OAuth credential is incomplete');
  return {
    clientId: data.client_id as string,
    clientSecret: data.client_secret as string,
    authorizationUrl: data.authorization_url as string,
    tokenUrl: data.token_url as string,
    scopes: scopesOf(data.scopes) ?? [],
    tokenAuthMethod: data.token_auth_method === 'client_secret_post' ? 'client_secret_post' : 'client_secret_basic',
    authorizationParams: paramsOf(data.authorization_params) ?? {},
  };
}

/**
 * The credential with new tokens: a refresh answer without a refresh token
 * keeps the one held (providers that do not rotate), one with a new refresh
 * token replaces it in the same write.
 */
export function withTokens(data: CredentialData, tokens: TokenSet): CredentialData {
  const next: CredentialData = { ...data, ...tokens };
  if (tokens.refresh_token === undefined && typeof data.refresh_token === 'string')
    next.refresh_token = data.refresh_token;
  if (tokens.expires_at === undefined) delete next.expires_at;
  if (tokens.scope === undefined) delete next.scope;
  return next;
}

/** What the refresh workflow needs to know of a credential's tokens, as of `now`. */
export function tokenMeta(data: CredentialData, generation: number, now = Date.now()): TokenMeta {
  const at = (value: unknown) => (typeof value === 'string' ? Date.parse(value) : NaN);
  const expiresAt = at(data.expires_at);
  const obtainedAt = at(data.obtained_at);
  const expires = !Number.isNaN(expiresAt);
  return {
    generation,
    expiresInMs: expires ? expiresAt - now : null,
    lifetimeMs: expires && !Number.isNaN(obtainedAt) ? expiresAt - obtainedAt : null,
    refreshable: typeof data.refresh_token === 'string' && data.refresh_token !== '',
  };
}

/** Whether the access token is still good for `skewMs` (a token without expiry is). */
export function accessTokenFresh(data: CredentialData, now: number, skewMs: number): boolean {
  if (typeof data.access_token !== 'string' || data.access_token === '') return false;
  const expiresAt = typeof data.expires_at === 'string' ? Date.parse(data.expires_at) : NaN;
  return Number.isNaN(expiresAt) || expiresAt - skewMs > now;
}

/** The credential_value an integration action's code gets: everything but the client secret and refresh token. */
export function actionCredentialValue(data: CredentialData): CredentialData {
  return Object.fromEntries(Object.entries(data).filter(([name]) => !keptFromActions.has(name)));
}
