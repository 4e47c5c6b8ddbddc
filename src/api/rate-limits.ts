import type { Response } from 'express';
import type { Quota, QuotaState, RateLimiter } from '../rate-limits/rate-limiter.js';

/** The draft-8 (draft-ietf-httpapi-ratelimit-headers-08) fields for the quotas a request counted against. */
export function rateLimitHeaders(quotas: readonly QuotaState[]): Record<string, string> {
  return {
    'RateLimit-Policy': quotas.map((q) => `"${q.name}";q=${q.limit};w=${q.windowSeconds}`).join(', '),
    RateLimit: quotas.map((q) => `"${q.name}";r=${q.remaining};t=${q.resetSeconds}`).join(', '),
  };
}

/** Responses whose request has counted against a quota already: a later refusal is not counted again. */
const counted = new WeakSet<Response>();

/** Counts the request against `quotas` and sets its RateLimit headers; over a limit the error handler answers 429. */
export async function takeRateLimit(
  res: Response,
  limiter: RateLimiter,
  what: string,
  quotas: readonly Quota[],
): Promise<void> {
  res.set(rateLimitHeaders(await limiter.take(what, quotas)));
  counted.add(res);
}

/**
 * Counts a request refused (400, 403, 404) before it counted against its route's own quota, against
 * `quotas` instead: refusals do not spend the budget meant for work, yet are not free. Over these
 * quotas the answer becomes 429. A request that already counted (refused later, e.g. 409) is left alone.
 */
export async function countRefusal(
  res: Response,
  limiter: RateLimiter,
  what: string,
  quotas: readonly Quota[],
): Promise<void> {
  if (!counted.has(res)) await takeRateLimit(res, limiter, what, quotas);
}
