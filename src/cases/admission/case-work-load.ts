import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { ProcessLoadRepo } from '../../store/process-load-repo.js';

/** One process's event-loop utilization now (0..1), as EventLoopLoad reads it. */
interface LoadSource {
  utilization(): number;
}

/**
 * A row this many publishing intervals old is a dead process's. Generous: a saturated process's timer fires
 * late, and its row must not read as idle because of that.
 */
const STALE_INTERVALS = 5;
/** The others' rows are read at most this many times per interval (every 250 ms at 1 s). */
const READS_PER_INTERVAL = 4;

/**
 * The fair share's saturation signal across processes (docs/concurrency.md#fair-share, split roles): the highest
 * event-loop utilization of this process and of the processes that run case work (worker and embedded). Each of
 * those publishes its own into the store every `intervalMs` (`publish`); any process's admission reads the others'
 * fresh rows beside its own live reading. An API process's own loop counts too: measured in split roles, intake
 * saturates it before the worker's, and rationing the runs is what let another organization's cases through.
 *
 * `utilization()` stays synchronous and off a case's path: it answers from the last read and starts the next when
 * that one is older than a quarter interval, so a burst of executes costs one statement per 250 ms, not one each. A
 * read older than a row may be (a process idle that long) no longer counts until the next answers.
 */
export class CaseWorkLoad {
  private readonly processId = randomUUID();
  private others = 0;
  /** performance.now() when the last read was begun, and when one last answered. */
  private askedAt = Number.NEGATIVE_INFINITY;
  private answeredAt = Number.NEGATIVE_INFINITY;
  private reading = false;
  /** Whether the last statement failed: a store outage is logged once, not every interval. */
  private failing = false;

  constructor(
    private readonly repo: ProcessLoadRepo,
    /** This process's own loop (EventLoopLoad). */
    private readonly own: LoadSource,
    private readonly intervalMs: number,
    private readonly warn: (err: unknown, message: string) => void,
  ) {}

  private get staleMs(): number {
    return STALE_INTERVALS * this.intervalMs;
  }

  /** Rows older than this, as the store writes times, are dead processes'. */
  private staleSince(): string {
    return new Date(Date.now() - this.staleMs).toISOString();
  }

  /** The highest utilization (0..1) of this process (live) and of the processes that run case work. */
  utilization(): number {
    const now = performance.now();
    if (now - this.askedAt >= this.intervalMs / READS_PER_INTERVAL) this.read(now);
    const others = now - this.answeredAt < this.staleMs ? this.others : 0;
    return Math.max(this.own.utilization(), others);
  }

  /**
   * From now on this process runs case work: its utilization goes to the store every interval (an unref'd timer)
   * for the other processes. The returned stop ends that and removes its row.
   */
  publish(): () => Promise<void> {
    let writing = Promise.resolve();
    let busy = false;
    let stopped = false;
    const write = () => {
      // A slow store does not pile writes up: the next interval writes the reading of then.
      if (busy || stopped) return;
      busy = true;
      writing = this.settle(
        this.repo.report(this.processId, this.own.utilization(), new Date().toISOString()),
        'this process could not publish its event-loop load',
      ).finally(() => (busy = false));
    };
    // Rows of processes that died without removing theirs go as this one starts: the table holds the live ones.
    void this.settle(this.repo.prune(this.staleSince()), 'the loads of dead processes could not be pruned').then(write);
    const timer = setInterval(write, this.intervalMs);
    timer.unref();
    return async () => {
      stopped = true;
      clearInterval(timer);
      await writing;
      await this.repo.remove(this.processId);
    };
  }

  private read(now: number): void {
    if (this.reading) return;
    this.reading = true;
    this.askedAt = now;
    void this.settle(
      this.repo.highest(this.staleSince(), this.processId).then((highest) => {
        this.others = highest;
        this.answeredAt = performance.now();
      }),
      'the event-loop loads of other processes could not be read',
    ).finally(() => (this.reading = false));
  }

  /** `statement` done or failed, never rejecting: a failure is logged when it begins an outage. */
  private async settle(statement: Promise<void>, message: string): Promise<void> {
    try {
      await statement;
      this.failing = false;
    } catch (err) {
      if (!this.failing) this.warn(err, message);
      this.failing = true;
    }
  }
}
