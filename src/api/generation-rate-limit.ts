import type { Response } from 'express';
import type { GenerationRepo } from '../store/generation-repo.js';
import { ApiError } from './errors.js';

export interface KeyLimit {
  max: number;
  windowMs: number;
}

/**
 * Requests per API key to the generation endpoints in fixed windows,
 * counted in the SQL store (one UPSERT) so the limit holds across API
 * processes. Answers carry the draft RateLimit headers; over the limit a 429
 * with Retry-After.
 */
export class GenerationRateLimiter {
  private lastPrune = 0;

  constructor(
    private readonly repo: GenerationRepo,
    private readonly limit: KeyLimit,
  ) {}

  async take(keyId: string, res: Response): Promise<void> {
    const now = Date.now();
    const windowStart = now - (now % this.limit.windowMs);
    const hits = await this.repo.hit(`generation:${keyId}`, windowStart);
    if (now - this.lastPrune > this.limit.windowMs) {
      this.lastPrune = now;
      await this.repo.pruneWindows(windowStart - this.limit.windowMs);
    }
    const resetS = Math.max(1, Math.ceil((windowStart + this.limit.windowMs - now) / 1000));
    const headers = {
      'RateLimit-Policy': `"generation";q=${this.limit.max};w=${Math.ceil(this.limit.windowMs / 1000)}`,
      RateLimit: `"generation";r=${Math.max(0, this.limit.max - hits)};t=${resetS}`,
    };
    if (hits > this.limit.max) {
      throw new ApiError(
        'RATE_LIMITED',
        `Too many generation requests for this API key; retry in ${resetS} s`,
        { retryAfterSeconds: resetS },
        { ...headers, 'Retry-After': String(resetS) },
        resetS,
      );
    }
    res.set(headers);
  }
}
