import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CaseEnds } from '../../src/cases/case-ends.js';

/** Whether the promise has settled once the microtasks queued so far have run. */
async function settled(promise: Promise<void>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await Promise.resolve();
  await Promise.resolve();
  return done;
}

describe('CaseEnds: an in-process case end wakes the sync delivery waiting on it', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('wakes a wait on the case at its end, before its bound', async () => {
    const ends = new CaseEnds();
    const watch = ends.watch('case-a');
    const wait = watch.next(10_000);
    expect(await settled(wait)).toBe(false);
    ends.ended('case-a');
    expect(await settled(wait)).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
    watch.close();
  });

  it('does not miss an end between the read and the wait: the next wait returns at once', async () => {
    const ends = new CaseEnds();
    const watch = ends.watch('case-a');
    ends.ended('case-a');
    expect(await settled(watch.next(10_000))).toBe(true);
    watch.close();
  });

  it('leaves waits on other cases to their bound, and forgets a closed watch', async () => {
    const ends = new CaseEnds();
    const other = ends.watch('case-b');
    const wait = other.next(500);
    ends.ended('case-a');
    expect(await settled(wait)).toBe(false);
    vi.advanceTimersByTime(500);
    expect(await settled(wait)).toBe(true);
    other.close();
    const closed = ends.watch('case-c');
    closed.close();
    ends.ended('case-c');
    const after = closed.next(500);
    expect(await settled(after)).toBe(false);
    vi.advanceTimersByTime(500);
    expect(await settled(after)).toBe(true);
  });
});
