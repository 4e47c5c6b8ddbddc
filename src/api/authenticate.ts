import type { Request } from 'express';
import type { AuthContext } from '../domain/auth-context.js';
import type { KeyAuthentication } from '../auth/key-authentication.js';

declare module 'express-serve-static-core' {
  interface Request {
    /** The caller, once a route has authenticated the request. */
    auth?: AuthContext;
  }
}

/** The key from `x-service-key`, or `Authorization: Bearer <key>` (accepted on every endpoint). */
export function presentedKey(req: Request): string | undefined {
  const header = req.headers['x-service-key'];
  if (typeof header === 'string' && header.length > 0) return header;
  const authorization = req.headers.authorization;
  if (authorization?.startsWith('Bearer ')) return authorization.slice(7);
  return undefined;
}

/** Authenticates a request once (the result is kept on it) from the key it presents. */
export function createAuthenticator(keys: KeyAuthentication): (req: Request) => Promise<AuthContext> {
  return async (req) => {
    req.auth ??= await keys.authenticate(presentedKey(req));
    return req.auth;
  };
}
