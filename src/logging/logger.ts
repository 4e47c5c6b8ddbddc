import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

/**
 * Paths whose values are secrets. pino replaces them before a line is
 * written, so a key or credential never reaches a log sink in clear.
 */
export const redactedPaths = [
  'req.headers["x-service-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'req.query.signature',
  'req.query.sig',
  'req.query.token',
  'req.query.access_token',
  'req.query.code',
  'req.query.state',
  'req.query.key',
  'res.headers["set-cookie"]',
  '*.apiKey',
  '*.key',
  '*.token',
  '*.secret',
  '*.password',
  '*.credentialData',
  '*.credentialValue',
  '*.clientSecret',
  '*.client_secret',
  '*.accessToken',
  '*.refreshToken',
  '*.masterKey',
];

/** Query parameters that carry a credential (signed upload URLs, OAuth callbacks). */
const secretQueryParams = /([?&](?:signature|sig|token|access_token|code|state|key)=)[^&#]*/gi;

/** A URL as it may be logged: the values of credential-carrying query parameters replaced. */
export function redactUrl(url: string): string {
  return url.replace(secretQueryParams, '$1[redacted]');
}

export function createLogger(level: string, options: LoggerOptions = {}, destination?: DestinationStream): Logger {
  const settings: LoggerOptions = {
    level,
    base: { service: 'caseflow' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: redactedPaths, censor: '[redacted]' },
    ...options,
  };
  // Operator commands print JSON on stdout; their logs go to stderr instead.
  return destination ? pino(settings, destination) : pino(settings);
}
