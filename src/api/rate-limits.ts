import type { Response } from 'express';
import type { Config } from '../config/config.js';
import type { AuthContext } from '../domain/auth-context.js';
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

/** Where a case starts over the API: initiate and execute each spend a budget of their own. */
type IntakeStep = 'initiate' | 'execute';

/**
 * The API's case intake per organization (config cases.intakeRateLimit, docs/concurrency.md#intake-rate): counted
 * first, so one organization's flood is refused before it costs a lookup or a start. Off (null), nothing is counted
 * and the store is not touched.
 */
export function intakeRateLimit(
  limiter: RateLimiter,
  settings: Config['cases']['intakeRateLimit'],
): (res: Response, auth: AuthContext, step: IntakeStep) => Promise<void> {
  const { perOrganization, windowMs } = settings;
  return async (res, auth, step) => {
    if (perOrganization === null) return;
    await takeRateLimit(res, limiter, `case ${step} requests of this organization`, [
      { name: 'organization', key: `intake:${step}:${auth.organizationId}`, limit: perOrganization, windowMs },
    ]);
  };
}
