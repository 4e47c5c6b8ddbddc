/** Node socket errors that mean the database could not be reached or went away mid-query. */
const socketErrors = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * True when a store call failed because the database is unreachable or busy,
 * not because of what was asked: the API answers 503 with Retry-After, since
 * the same request will work once the database is back. Postgres: SQLSTATE
 * class 08 (connection exception) and 57P01-57P03 (shut down, restarting); the
 * pool's connect timeout; SQLite: a lock held past busy_timeout.
 */
export function isStoreUnavailable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (typeof code === 'string') {
    if (socketErrors.has(code) || code.startsWith('08') || ['57P01', '57P02', '57P03'].includes(code)) return true;
    if (code === 'SQLITE_BUSY' || code === 'SQLITE_BUSY_SNAPSHOT') return true;
  }
  return (
    typeof message === 'string' &&
    (message.includes('timeout exceeded when trying to connect') ||
      message.startsWith('Connection terminated') ||
      message === 'Client has encountered a connection error and is not queryable')
  );
}
