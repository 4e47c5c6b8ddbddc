import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ShortLivedCache } from '../../src/caching/short-lived-cache.js';

describe('ShortLivedCache', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(1_000_000);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('reuses an entry for ttlMs from when its read began, never past its own expiry', () => {
    const cache = new ShortLivedCache<string, number>({ ttlMs: 1000, maxEntries: 10 });
    const begunEarlier = cache.beginRead();
    vi.advanceTimersByTime(600);
    cache.set('a', 1, cache.beginRead());
    cache.set('begun-earlier', 2, begunEarlier);
    cache.set('expiring', 3, cache.beginRead(), Date.now() + 200);
    vi.advanceTimersByTime(199);
    expect([cache.get('a'), cache.get('begun-earlier'), cache.get('expiring')]).toEqual([1, 2, 3]);
    vi.advanceTimersByTime(1);
    expect(cache.get('expiring')).toBeUndefined();
    vi.advanceTimersByTime(200);
    expect(cache.get('begun-earlier')).toBeUndefined();
    expect(cache.get('a')).toBe(1);
    vi.advanceTimersByTime(600);
    expect(cache.get('a')).toBeUndefined();
  });

  it('drops the oldest entries beyond maxEntries', () => {
    const cache = new ShortLivedCache<string, number>({ ttlMs: 1000, maxEntries: 2 });
    for (const [key, value] of [
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ] as const)
      cache.set(key, value, cache.beginRead());
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual([undefined, 2, 3]);
  });

  it('keeps nothing when turned off', () => {
    for (const options of [
      { ttlMs: 0, maxEntries: 10 },
      { ttlMs: 1000, maxEntries: 0 },
    ]) {
      const cache = new ShortLivedCache<string, number>(options);
      cache.set('a', 1, cache.beginRead());
      expect(cache.get('a')).toBeUndefined();
    }
  });

  it('forgets one entry, the matching ones, or all', () => {
    const cache = new ShortLivedCache<string, { owner: string }>({ ttlMs: 1000, maxEntries: 10 });
    for (const [key, owner] of [
      ['k1', 'x'],
      ['k2', 'x'],
      ['k3', 'y'],
      ['k4', 'z'],
    ] as const)
      cache.set(key, { owner }, cache.beginRead());
    cache.delete('k4');
    cache.deleteWhere((v) => v.owner === 'x');
    expect([cache.get('k1'), cache.get('k2'), cache.get('k3'), cache.get('k4')]).toEqual([
      undefined,
      undefined,
      { owner: 'y' },
      undefined,
    ]);
    cache.deleteWhere();
    expect(cache.get('k3')).toBeUndefined();
  });

  it('keeps no answer whose read overlapped a forget: it may be what was forgotten', () => {
    const cache = new ShortLivedCache<string, string>({ ttlMs: 1000, maxEntries: 10 });
    const inFlight = cache.beginRead();
    cache.delete('revoked-key');
    cache.set('revoked-key', 'answer read before the revocation', inFlight);
    expect(cache.get('revoked-key')).toBeUndefined();
    const inFlightToo = cache.beginRead();
    cache.deleteWhere((v) => v === 'anything');
    cache.set('other', 'read across a forget of some entries', inFlightToo);
    expect(cache.get('other')).toBeUndefined();
    cache.set('other', 'read after it', cache.beginRead());
    expect(cache.get('other')).toBe('read after it');
  });
});
