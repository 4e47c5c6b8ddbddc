import { MemoryStore, type Options } from 'express-rate-limit';
import { ApiError } from './errors.js';

export interface RedeliverLimits {
  redeliverWindowMs: number;
  redeliverPerCase: number;
  redeliverPerWorkspace: number;
}

export interface LimitHeaders {
  'RateLimit-Policy': string;
  RateLimit: string;
  'Retry-After'?: string;
}

/**
 * Redeliveries per case and per workspace in a fixed window, counted with
 * express-rate-limit's store: its middleware keys on the request, while the
 * workspace is known only after the case is loaded, so the route counts here.
 */
export class RedeliverLimiter {
  private readonly perCase = new MemoryStore();
  private readonly perWorkspace = new MemoryStore();

  constructor(private readonly limits: RedeliverLimits) {
    // The store reads only windowMs from the middleware's options.
    this.perCase.init({ windowMs: limits.redeliverWindowMs } as Options);
    this.perWorkspace.init({ windowMs: limits.redeliverWindowMs } as Options);
  }

  /** Counts one redelivery; the draft-8 RateLimit headers to send, or a 429 (headers in `metadata`) when over either limit. */
  async take(workspaceId: string, caseId: string): Promise<LimitHeaders> {
    const [byCase, byWorkspace] = await Promise.all([
      this.perCase.increment(`case:${caseId}`),
      this.perWorkspace.increment(`workspace:${workspaceId}`),
    ]);
    const window = Math.ceil(this.limits.redeliverWindowMs / 1000);
    const quotas = [
      { name: 'case', limit: this.limits.redeliverPerCase, info: byCase },
      { name: 'workspace', limit: this.limits.redeliverPerWorkspace, info: byWorkspace },
    ].map((q) => ({
      ...q,
      remaining: Math.max(0, q.limit - q.info.totalHits),
      resetS: Math.max(0, Math.ceil(((q.info.resetTime?.getTime() ?? Date.now()) - Date.now()) / 1000)),
    }));
    const headers: LimitHeaders = {
      'RateLimit-Policy': quotas.map((q) => `"${q.name}";q=${q.limit};w=${window}`).join(', '),
      RateLimit: quotas.map((q) => `"${q.name}";r=${q.remaining};t=${q.resetS}`).join(', '),
    };
    const over = quotas.filter((q) => q.info.totalHits > q.limit);
    if (over.length === 0) return headers;
    await Promise.all([
      this.perCase.decrement(`case:${caseId}`),
      this.perWorkspace.decrement(`workspace:${workspaceId}`),
    ]);
    const retryAfter = Math.max(1, ...over.map((q) => q.resetS));
    throw new RedeliverLimitError(
      { ...headers, 'Retry-After': String(retryAfter) },
      over.map((q) => q.name).join(' and '),
      retryAfter,
    );
  }
}

export class RedeliverLimitError extends ApiError {
  constructor(headers: LimitHeaders, scope: string, retryAfterSeconds: number) {
    super(
      'RATE_LIMITED',
      `Too many redeliveries for this ${scope}; retry in ${retryAfterSeconds} s`,
      { retryAfterSeconds },
      { ...headers },
      retryAfterSeconds,
    );
  }
}
