import { describe, expect, it } from 'vitest';
import { UtilizationWindow, eventLoopLoad } from '../../src/cases/admission/event-loop-load.js';
import { saturated } from '../../src/cases/admission/admission-rules.js';

/** The saturation gate's arithmetic (docs/concurrency.md#saturation): a rolling window of event-loop samples. */
describe('event-loop utilization window', () => {
  const at = (ms: number, active: number) => ({ at: ms, active, idle: ms - active });

  it('is the busy share between the oldest kept sample and now', () => {
    const window = new UtilizationWindow(1000);
    window.add(at(0, 0));
    expect(window.utilization(at(0, 0))).toBe(0);
    // 750 ms busy of 1000.
    expect(window.utilization(at(1000, 750))).toBe(0.75);
  });

  it('forgets samples older than the window, so a past burst stops counting', () => {
    const window = new UtilizationWindow(1000);
    window.add(at(0, 0));
    window.add(at(1000, 1000)); // a second fully busy
    expect(window.utilization(at(1000, 1000))).toBe(1);
    window.add(at(1500, 1000));
    // Still spans the window from 0: 1000 busy of 1500.
    expect(window.utilization(at(1500, 1000))).toBeCloseTo(2 / 3);
    window.add(at(2000, 1000));
    // The sample at 1000 now spans the window on its own: the burst before it is forgotten.
    expect(window.utilization(at(2000, 1000))).toBe(0);
  });

  it('counts a block since the last sample (the reading is taken now, not at the last tick)', () => {
    const window = new UtilizationWindow(1000);
    window.add(at(0, 0));
    window.add(at(250, 0));
    expect(window.utilization(at(1250, 1000))).toBeCloseTo(0.8);
  });

  it('reads this process: a busy loop raises it', async () => {
    const load = eventLoopLoad();
    const until = performance.now() + 400;
    while (performance.now() < until);
    expect(load.utilization()).toBeGreaterThan(0.2);
    expect(eventLoopLoad()).toBe(load);
  });
});

describe('saturated', () => {
  it('at or above the threshold; a threshold of 0 is always', () => {
    expect(saturated(0.7, 0.69)).toBe(false);
    expect(saturated(0.7, 0.7)).toBe(true);
    expect(saturated(0.7, 0.95)).toBe(true);
    expect(saturated(0, 0)).toBe(true);
  });
});
