import { destination as fileDestination, pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import pretty from 'pino-pretty';

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
/** Path segments that are bearer secrets: the OAuth connection token of the connect check, a task's completion link. */
const secretPathSegments = /(\/integration\/connect\/|\/task-links\/)[^/?#]+/gi;

export function redactUrl(url: string): string {
  return url.replace(secretQueryParams, '$1[redacted]').replace(secretPathSegments, '$1[redacted]');
}

export type LogFormat = 'auto' | 'json' | 'pretty';

/**
 * The service's logger. JSON lines for log shippers; with `pretty` (or `auto`
 * on a terminal) one readable line per event, formatted in-process and
 * synchronously so a crash loses nothing. Redaction runs before either.
 */
export function createLogger(
  level: string,
  options: LoggerOptions = {},
  format: LogFormat = 'json',
  destination?: DestinationStream,
): Logger {
  const readable = format === 'pretty' || (format === 'auto' && process.stdout.isTTY);
  const stream = readable
    ? pretty({
        sync: true,
        colorize: destination === undefined && process.stdout.isTTY,
        translateTime: 'SYS:HH:MM:ss.l',
        ignore: 'pid,hostname,service',
        destination: destination ?? 1,
      })
    : (destination ?? fileDestination({ dest: 1, sync: true }));
  return pino(
    {
      level,
      base: { service: 'caseflow' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: redactedPaths, censor: '[redacted]' },
      ...options,
    },
    stream,
  );
}
