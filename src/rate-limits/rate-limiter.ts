import { DomainError } from '../errors.js';
import type { RateLimitRepo } from '../store/rate-limit-repo.js';

/** One limit a request counts against: at most `limit` requests per `key` in each fixed window of `windowMs`. */
export interface Quota {
  /** The limit's name in the RateLimit headers and messages (`case`, `workspace`, `generation`). */
  name: string;
  key: string;
  limit: number;
  windowMs: number;
}

/** Where a request left one quota: what the draft-8 `RateLimit` / `RateLimit-Policy` headers say. */
export interface QuotaState {
  name: string;
  limit: number;
  windowSeconds: number;
  remaining: number;
  /** Seconds until the window ends. */
  resetSeconds: number;
}

/** Over a limit: a 429 with `Retry-After`; the API adds the quotas' RateLimit headers. */
export class RateLimitedError extends DomainError {
  constructor(
    readonly quotas: readonly QuotaState[],
    message: string,
    retryAfterSeconds: number,
  ) {
    super('RATE_LIMITED', message, { retryAfterSeconds }, retryAfterSeconds);
    this.name = 'RateLimitedError';
  }
}

/** How often one process prunes ended windows (any process's prune serves all). */
const pruneEveryMs = 60_000;

/**
 * Fixed-window rate limits counted in the store, so every API process spends
 * one budget. A refused request counts against none of its quotas: a flood on
 * one case does not use up its workspace's budget.
 */
export class RateLimiter {
  private nextPrune = 0;

  constructor(
    private readonly repo: RateLimitRepo,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts one request (`what`, for the message) against every quota; their states, or RateLimitedError. */
  async take(what: string, quotas: readonly Quota[]): Promise<QuotaState[]> {
    const now = this.now();
    const windows = quotas.map((quota) => {
      const windowStart = now - (now % quota.windowMs);
      return { bucket: quota.key, windowStart, expiresAt: windowStart + quota.windowMs, limit: quota.limit };
    });
    const { counted, hits } = await this.repo.hit(windows);
    if (now >= this.nextPrune) {
      this.nextPrune = now + pruneEveryMs;
      await this.repo.prune(now);
    }
    const states = quotas.map((quota, i) => {
      // A refused request was not counted: the count without it is one less.
      const used = (hits[i] ?? 0) - (counted ? 0 : 1);
      return {
        name: quota.name,
        limit: quota.limit,
        windowSeconds: Math.ceil(quota.windowMs / 1000),
        remaining: Math.max(0, quota.limit - used),
        resetSeconds: Math.max(1, Math.ceil(((windows[i]?.expiresAt ?? now) - now) / 1000)),
      };
    });
    if (counted) return states;
    const over = states.filter((state, i) => (hits[i] ?? 0) > state.limit);
    const retryAfter = Math.max(...over.map((state) => state.resetSeconds));
    const names = over.map((state) => state.name).join(' and ');
    throw new RateLimitedError(
      states,
      `Too many ${what}: over the ${names} limit; retry in ${retryAfter} s`,
      retryAfter,
    );
  }
}
