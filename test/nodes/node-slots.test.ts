import { describe, expect, it } from 'vitest';
import { NodeSlots } from '../../src/domain/node-slots.js';

describe('NodeSlots: the per-case cap on nodes running at once', () => {
  it('lets `limit` nodes run and queues the rest in the order they became ready', () => {
    const slots = new NodeSlots(2);
    expect(['a', 'b', 'c', 'd'].map((id) => slots.take(id))).toEqual([true, true, false, false]);
    expect(slots.queued()).toEqual(['c', 'd']);
    expect(slots.release()).toBe('c');
    expect(slots.release()).toBe('d');
    expect(slots.queued()).toEqual([]);
  });

  it('never holds more than `limit` slots however nodes end and arrive', () => {
    const slots = new NodeSlots(3);
    const running = new Set<string>();
    let peak = 0;
    const ready = (id: string): void => {
      if (slots.take(id)) running.add(id);
    };
    const end = (id: string): void => {
      running.delete(id);
      const next = slots.release();
      if (next !== undefined) running.add(next);
    };
    for (let i = 0; i < 10; i++) ready(`n${i}`);
    for (let round = 0; round < 20; round++) {
      peak = Math.max(peak, running.size);
      const first = [...running][0];
      if (first === undefined) break;
      end(first);
      if (round % 3 === 0) ready(`late${round}`);
    }
    expect(peak).toBe(3);
    expect(running.size).toBe(0);
    expect(slots.queued()).toEqual([]);
  });

  it('a freed slot goes to a node that waits before a node that arrives after', () => {
    const slots = new NodeSlots(1);
    expect(slots.take('a')).toBe(true);
    expect(slots.take('b')).toBe(false);
    expect(slots.release()).toBe('b');
    expect(slots.take('c')).toBe(false);
    expect(slots.release()).toBe('c');
    expect(slots.release()).toBeUndefined();
    expect(slots.take('d')).toBe(true);
  });
});
