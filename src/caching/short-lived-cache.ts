export interface ShortLivedCacheOptions {
  /** How long an entry is reused (0 turns the cache off). */
  ttlMs: number;
  /** The oldest entries go first beyond this many (0 turns the cache off). */
  maxEntries: number;
}

/**
 * Answers reused for a short time (at most a second or so on the hot
 * paths that use it), bounded in count. An entry is kept until `from +
 * ttlMs` or its own `expiresAt`, whichever is first: callers pass `from` as
 * the moment their read began, so a change committed during the read is
 * seen ttlMs after it.
 */
export class ShortLivedCache<K, V> {
  private readonly entries = new Map<K, { value: V; until: number }>();

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

  set(key: K, value: V, from = Date.now(), expiresAt = Infinity): void {
    const { ttlMs, maxEntries } = this.options;
    if (ttlMs <= 0 || maxEntries <= 0) return;
    while (this.entries.size >= maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
    this.entries.set(key, { value, until: Math.min(from + ttlMs, expiresAt) });
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  /** Drops every entry whose value matches (all of them without a test). */
  deleteWhere(matches?: (value: V) => boolean): void {
    if (!matches) this.entries.clear();
    else for (const [key, entry] of this.entries) if (matches(entry.value)) this.entries.delete(key);
  }
}
