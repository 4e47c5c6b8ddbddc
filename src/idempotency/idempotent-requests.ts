import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { DomainError } from '../errors.js';
import type { IdempotencyRef, IdempotencyRepo } from '../store/idempotency-repo.js';
import { IDEMPOTENCY_TTL_MS, idempotencyHashes } from './fingerprint.js';

/** A request's answer as sent: what a retry with the same key is answered again. */
export interface Answer {
  status: number;
  body: unknown;
}

/** One use of an Idempotency-Key: whose, where it applies, and the request it fingerprints. */
export interface KeyedRequest {
  organizationId: string;
  /** `api` for the case starts, `hook:<id>` for one hook's deliveries: keys of different scopes never meet. */
  scope: string;
  key: string;
  /** What must be the same for a retry: the route and its body. */
  request: unknown;
}

export interface IdempotencyOptions {
  /** How long a claim holds the key when its request never finishes (the process died). */
  leaseMs: number;
  /** How long a retry waits for a concurrent first request to finish before answering 409. */
  waitMs: number;
  pollMs: number;
}

const defaults: IdempotencyOptions = { leaseMs: 120_000, waitMs: 15_000, pollMs: 50 };
/** How often one process purges expired keys (any process's purge serves all). */
const purgeEveryMs = 60_000;

/**
 * Idempotency-Key handling in the store, so every API process sees one record:
 * the first request claims the key (a primary key decides between concurrent
 * ones), runs, and records its answer; a retry with the same request gets that
 * answer and runs nothing; the same key with another request is a 409. Keys are
 * kept 24 h. Only an answer is remembered: a request that fails frees its key.
 */
export class IdempotentRequests {
  private nextPurge = 0;
  private readonly options: IdempotencyOptions;

  constructor(
    private readonly repo: IdempotencyRepo,
    options: Partial<IdempotencyOptions> = {},
    private readonly now: () => number = Date.now,
  ) {
    this.options = { ...defaults, ...options };
  }

  /** The answer of `produce`, run once per key and request; `replayed` when it is an earlier request's. */
  async run(keyed: KeyedRequest, produce: () => Promise<Answer>): Promise<{ answer: Answer; replayed: boolean }> {
    const { keyHash, requestHash } = idempotencyHashes(keyed.key, keyed.request);
    const ref: IdempotencyRef = { organizationId: keyed.organizationId, scope: keyed.scope, keyHash };
    const claimToken = randomUUID();
    const giveUpAt = this.now() + this.options.waitMs;
    await this.purgeNow();
    for (;;) {
      const now = this.now();
      const held = await this.repo.claim(ref, {
        requestHash,
        claimToken,
        leaseUntil: new Date(now + this.options.leaseMs).toISOString(),
        now: new Date(now).toISOString(),
        notBefore: new Date(now - IDEMPOTENCY_TTL_MS).toISOString(),
      });
      if (held?.claimToken === claimToken)
        return { answer: await this.produceOnce(ref, claimToken, produce), replayed: false };
      if (held && held.requestHash !== requestHash)
        throw DomainError.conflict('This Idempotency-Key was already used with a different request');
      if (held?.answer) return { answer: held.answer, replayed: true };
      if (this.now() >= giveUpAt)
        throw DomainError.conflict('A request with this Idempotency-Key is still in progress; retry later');
      await sleep(this.options.pollMs);
    }
  }

  private async produceOnce(ref: IdempotencyRef, claimToken: string, produce: () => Promise<Answer>): Promise<Answer> {
    let answer: Answer;
    try {
      answer = await produce();
    } catch (err) {
      await this.repo.release(ref, claimToken);
      throw err;
    }
    await this.repo.complete(ref, claimToken, answer);
    return answer;
  }

  /** Expired keys go at most once a minute per process. */
  private async purgeNow(): Promise<void> {
    const now = this.now();
    if (now < this.nextPurge) return;
    this.nextPurge = now + purgeEveryMs;
    await this.repo.purge(new Date(now - IDEMPOTENCY_TTL_MS).toISOString());
  }
}
