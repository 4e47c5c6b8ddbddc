export interface ShortLivedCacheOptions {
  /** How long an entry is reused (0 turns the cache off). */
  ttlMs: number;
  /** The oldest entries go first beyond this many (0 turns the cache off). */
  maxEntries: number;
}

/** When a read of the source began, and how many forgets had happened by then. */
export interface ReadStart {
  readonly at: number;
  readonly forgets: number;
}

/**
 * Answers reused for a short time (at most a second or so on the hot
 * paths that use it), bounded in count. An answer is kept from when its
 * read began (`beginRead`), so a change committed during the read is seen
 * ttlMs after it, and until its own `expiresAt` if that is sooner. An
 * answer whose read overlapped a forget is not kept: it may be what the
 * forget was for (a key revoked while its lookup was in flight).
 */
export class ShortLivedCache<K, V> {
  private readonly entries = new Map<K, { value: V; until: number }>();
  private forgets = 0;

  constructor(private readonly options: ShortLivedCacheOptions) {}

  get ttlMs(): number {
    return this.options.ttlMs;
  }

  get(key: K): V | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.until > Date.now()) return hit.value;
    this.entries.delete(key);
    return undefined;
  }

  /** Call before reading the source; hand the result to `set` with the answer. */
  beginRead(): ReadStart {
    return { at: Date.now(), forgets: this.forgets };
  }

  set(key: K, value: V, read: ReadStart, expiresAt = Infinity): void {
    const { ttlMs, maxEntries } = this.options;
    if (ttlMs <= 0 || maxEntries <= 0 || read.forgets !== this.forgets) return;
    while (this.entries.size >= maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
    this.entries.set(key, { value, until: Math.min(read.at + ttlMs, expiresAt) });
  }

  delete(key: K): void {
    this.forgets += 1;
    this.entries.delete(key);
  }

  /** Drops every entry whose value matches (all of them without a test). */
  deleteWhere(matches?: (value: V) => boolean): void {
    this.forgets += 1;
    if (!matches) this.entries.clear();
    else for (const [key, entry] of this.entries) if (matches(entry.value)) this.entries.delete(key);
  }
}
