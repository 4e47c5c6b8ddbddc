import { performance } from 'node:perf_hooks';

/** The event loop's cumulative busy and idle time (ms) at one moment, as performance.eventLoopUtilization() reads it. */
export interface LoopSample {
  at: number;
  active: number;
  idle: number;
}

/**
 * The event loop's utilization over a rolling window: of the time between the oldest kept sample
 * (the newest one at least `windowMs` old) and now, the share the loop spent busy.
 */
export class UtilizationWindow {
  private readonly samples: LoopSample[] = [];

  constructor(private readonly windowMs: number) {}

  add(sample: LoopSample): void {
    this.samples.push(sample);
    // While the second oldest already spans the window, the oldest is no longer needed.
    for (let second = this.samples[1]; second && second !== sample && second.at <= sample.at - this.windowMs;) {
      this.samples.shift();
      second = this.samples[1];
    }
  }

  /** Busy share from the oldest kept sample to `now` (a fresh sample, so a block since the last tick counts); 0 without a span. */
  utilization(now: LoopSample): number {
    const oldest = this.samples[0];
    if (!oldest) return 0;
    const active = now.active - oldest.active;
    const total = active + now.idle - oldest.idle;
    return total > 0 ? active / total : 0;
  }
}

/** How often the window takes a sample, and how far back it looks: long enough to ride out one slow callback. */
const TICK_MS = 250;
const WINDOW_MS = 1500;

function sample(): LoopSample {
  const { active, idle } = performance.eventLoopUtilization();
  return { at: performance.now(), active, idle };
}

/** This process's event-loop utilization over the last ~1.5 s, sampled by an unref'd timer (it never keeps the process up). */
export class EventLoopLoad {
  private readonly window = new UtilizationWindow(WINDOW_MS);

  constructor() {
    this.window.add(sample());
    setInterval(() => this.window.add(sample()), TICK_MS).unref();
  }

  utilization(): number {
    return this.window.utilization(sample());
  }
}

let shared: EventLoopLoad | undefined;

/** The process's one sampler: the loop is the process's, so every service built in it reads the same one. */
export function eventLoopLoad(): EventLoopLoad {
  return (shared ??= new EventLoopLoad());
}
