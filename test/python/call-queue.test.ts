import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import {
  CallQueue,
  DISPATCH_MARGIN_MS,
  type CallKind,
  type QueuedCall,
  type ShedReason,
} from '../../src/python/call-queue.js';

/** The queue alone, without Python: servers are tokens, time is the fake clock. */
interface TestCall extends QueuedCall {
  name: string;
  shedAs?: ShedReason;
}

function call(name: string, org: string, extra: Partial<QueuedCall> = {}): TestCall {
  const c: TestCall = {
    name,
    kind: 'isolated',
    org,
    timeoutMs: 1000,
    deadline: Infinity,
    shed: (reason) => {
      c.shedAs = reason;
    },
    ...extra,
  };
  return c;
}

const always = (): string => 'server';
const cap =
  (n: number) =>
  (_kind: CallKind): number =>
    n;

/** Dispatches until the queue yields nothing; the names in dispatch order. */
function drain(queue: CallQueue<TestCall>, capacity = 100): string[] {
  const names: string[] = [];
  for (let next = queue.next(always, cap(capacity)); next; next = queue.next(always, cap(capacity)))
    names.push(next.call.name);
  return names;
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('bounds', () => {
  test('an organization past its bound is refused at once; others still queue', () => {
    const queue = new CallQueue<TestCall>({ perOrganization: 2, total: 10 });
    const [a1, a2, a3, b1] = [call('a1', 'A'), call('a2', 'A'), call('a3', 'A'), call('b1', 'B')];
    for (const c of [a1, a2, a3, b1]) queue.add(c);
    expect(a3.shedAs).toBe('organization');
    expect([a1.shedAs, a2.shedAs, b1.shedAs]).toEqual([undefined, undefined, undefined]);
    expect(queue.stats()).toMatchObject({ queued: 3, peakQueuedPerOrganization: 2, shed: { organization: 1 } });
    // A dispatched call frees its place in the organization's queue.
    expect(queue.next(always, cap(1))?.call.name).toBe('a1');
    const a4 = call('a4', 'A');
    queue.add(a4);
    expect(a4.shedAs).toBeUndefined();
  });

  test('the total bound is the last guard', () => {
    const queue = new CallQueue<TestCall>({ perOrganization: 5, total: 2 });
    const calls = [call('a', 'A'), call('b', 'B'), call('c', 'C')];
    for (const c of calls) queue.add(c);
    expect(calls.map((c) => c.shedAs)).toEqual([undefined, undefined, 'total']);
    expect(queue.stats().shed).toEqual({ organization: 0, total: 1, deadline: 0, cancelled: 0 });
  });
});

describe('fairness', () => {
  test('the organization with fewer calls in flight goes first, each in arrival order', () => {
    const queue = new CallQueue<TestCall>({ perOrganization: 10, total: 10 });
    for (const c of [call('a1', 'A'), call('a2', 'A'), call('a3', 'A'), call('b1', 'B'), call('b2', 'B')]) queue.add(c);
    expect(drain(queue)).toEqual(['a1', 'b1', 'a2', 'b2', 'a3']);
  });

  test('an organization at its cap waits while another runs', () => {
    const queue = new CallQueue<TestCall>({ perOrganization: 10, total: 10 });
    for (const c of [call('a1', 'A'), call('a2', 'A'), call('b1', 'B')]) queue.add(c);
    expect(drain(queue, 1)).toEqual(['a1', 'b1']);
    const first = call('a1', 'A');
    queue.finished(first);
    expect(drain(queue, 1)).toEqual(['a2']);
  });

  test('a kind without a free server does not hold back the other kind', () => {
    const queue = new CallQueue<TestCall>({ perOrganization: 10, total: 10 });
    queue.add(call('net', 'A', { kind: 'network' }));
    queue.add(call('iso', 'A'));
    const next = queue.next((kind) => (kind === 'isolated' ? 'server' : null), cap(5));
    expect(next?.call.name).toBe('iso');
    expect(queue.length).toBe(1);
  });
});

describe('deadlines', () => {
  const limits = { perOrganization: 10, total: 10 };

  test('a call that cannot run its whole timeout before its deadline is dropped at once', () => {
    const queue = new CallQueue<TestCall>(limits);
    const late = call('late', 'A', { timeoutMs: 5000, deadline: Date.now() + 5000 + DISPATCH_MARGIN_MS - 1 });
    queue.add(late);
    expect(late.shedAs).toBe('deadline');
    expect(queue.length).toBe(0);
  });

  test('a waiting call leaves the queue when it could no longer run in full, and is never dispatched', () => {
    const queue = new CallQueue<TestCall>(limits);
    const waiting = call('waiting', 'A', { timeoutMs: 5000, deadline: Date.now() + 8000 });
    queue.add(waiting);
    vi.advanceTimersByTime(8000 - 5000 - DISPATCH_MARGIN_MS - 1);
    expect(waiting.shedAs).toBeUndefined();
    vi.advanceTimersByTime(2);
    expect(waiting.shedAs).toBe('deadline');
    expect(drain(queue)).toEqual([]);
    expect(queue.stats()).toMatchObject({ dispatched: 0, shed: { deadline: 1 } });
  });

  test('a call found past its moment when dispatching is dropped even if its timer has not fired', () => {
    let now = 0;
    const queue = new CallQueue<TestCall>(limits, () => now);
    const waiting = call('waiting', 'A', { timeoutMs: 1000, deadline: 5000 });
    const other = call('other', 'B');
    queue.add(waiting);
    queue.add(other);
    now = 4000;
    expect(drain(queue)).toEqual(['other']);
    expect(waiting.shedAs).toBe('deadline');
  });

  test('a cancelled caller takes its call out of the queue', () => {
    const queue = new CallQueue<TestCall>(limits);
    const controller = new AbortController();
    const cancelled = call('cancelled', 'A', { signal: controller.signal });
    queue.add(cancelled);
    queue.add(call('kept', 'A'));
    controller.abort();
    expect(cancelled.shedAs).toBe('cancelled');
    expect(drain(queue)).toEqual(['kept']);

    const already = call('already', 'A', { signal: controller.signal });
    queue.add(already);
    expect(already.shedAs).toBe('cancelled');
    expect(queue.stats()).toMatchObject({ queued: 0, dispatched: 1, shed: { cancelled: 2 } });
  });
});
