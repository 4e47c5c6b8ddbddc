import { pino, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

/**
 * Paths whose values are secrets. pino replaces them before a line is
 * written, so a key or credential never reaches a log sink in clear.
 */
export const redactedPaths = [
  'req.headers["x-service-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
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

export function createLogger(level: string, options: LoggerOptions = {}): Logger {
  return pino({
    level,
    base: { service: 'caseflow' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: redactedPaths, censor: '[redacted]' },
    ...options,
  });
}
