import type { AuthType } from '../domain/catalog.js';
import type { CredentialData } from './credential-data.js';

/**
 * How a credential is applied to an HTTP request (the smoke test; action code
 * applies it itself from `credential_value`). Each auth type reads named
 * inputs, falling back to the credential's only string value:
 *
 * - api_key: `X-API-Key: <api_key>`
 * - access_token, jwt: `Authorization: Bearer <access_token | token | jwt>`
 * - custom_header_auth: `<header_name>: <header_value>`
 * - other, no_auth: nothing
 * - oauth: `Authorization: Bearer <access_token>` once authorized
 */
export type AppliedAuth = { headers: Record<string, string> } | { error: string };

function pick(data: CredentialData, names: string[]): string | undefined {
  for (const name of names) {
    const value = data[name];
    if (typeof value === 'string' && value !== '') return value;
  }
  const strings = Object.values(data).filter((v): v is string => typeof v === 'string' && v !== '');
  return strings.length === 1 ? strings[0] : undefined;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export function applyCredential(authType: AuthType, data: CredentialData): AppliedAuth {
  switch (authType) {
    case 'api_key': {
      const key = pick(data, ['api_key', 'apiKey', 'key']);
      return key === undefined
        ? { error: 'the credential has no api_key value to send' }
        : { headers: { 'x-api-key': key } };
    }
    case 'access_token':
    case 'jwt': {
      const token = pick(data, ['access_token', 'token', 'jwt']);
      return token === undefined
        ? { error: 'the credential has no access_token value to send' }
        : { headers: { authorization: `Bearer ${token}` } };
    }
    case 'custom_header_auth': {
      const name = data.header_name;
      const value = data.header_value;
      if (typeof name !== 'string' || !TOKEN.test(name) || typeof value !== 'string') {
        return { error: 'a custom_header_auth credential needs header_name (a header name) and header_value' };
      }
      return { headers: { [name.toLowerCase()]: value } };
    }
    case 'oauth': {
      const token = data.access_token;
      return typeof token === 'string' && token !== ''
        ? { headers: { authorization: `Bearer ${token}` } }
        : { error: 'the OAuth credential is not authorized yet' };
    }
    case 'other':
    case 'no_auth':
      return { headers: {} };
  }
}
