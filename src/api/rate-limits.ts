import type { Response } from 'express';
import type { Quota, QuotaState, RateLimiter } from '../rate-limits/rate-limiter.js';

/** The draft-8 (draft-ietf-httpapi-ratelimit-headers-08) fields for the quotas a request counted against. */
export function rateLimitHeaders(quotas: readonly QuotaState[]): Record<string, string> {
  return {
    'RateLimit-Policy': quotas.map((q) => `"${q.name}";q=${q.limit};w=${q.windowSeconds}`).join(', '),
    RateLimit: quotas.map((q) => `"${q.name}";r=${q.remaining};t=${q.resetSeconds}`).join(', '),
  };
}

/** Counts the request against `quotas` and sets its RateLimit headers; over a limit the error handler answers 429. */
export async function takeRateLimit(
  res: Response,
  limiter: RateLimiter,
  what: string,
  quotas: readonly Quota[],
): Promise<void> {
  res.set(rateLimitHeaders(await limiter.take(what, quotas)));
}
