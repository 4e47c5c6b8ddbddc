/** Which server pool a call runs in. */
export type CallKind = 'isolated' | 'network';

/**
 * Why a call left the queue without running: the queue of its organization or
 * the whole queue was full, its deadline came too close to run it whole, or its
 * caller gave up (the activity was cancelled).
 */
export type ShedReason = 'organization' | 'total' | 'deadline' | 'cancelled';

const busyMessage: Record<ShedReason, string> = {
  organization: 'The Python runner queue of this organization is full; retry later',
  total: 'The Python runner queue is full; retry later',
  deadline: 'The Python call waited in the queue until it could no longer run in full before its deadline',
  cancelled: 'The Python call was cancelled while it waited in the queue',
};

/** When a call that did not run may be tried again: long enough for a round of queued calls to run. */
export const BUSY_RETRY_AFTER_MS = 1_000;

/** What a call that did not run comes back as. */
export class PythonPoolBusy extends Error {
  readonly retryAfterMs = BUSY_RETRY_AFTER_MS;

  constructor(readonly reason: ShedReason) {
    super(busyMessage[reason]);
    this.name = 'PythonPoolBusy';
  }
}

export interface QueueLimits {
  /** Calls one organization may have waiting. */
  perOrganization: number;
  /** Calls waiting in all, the last guard. */
  total: number;
}

export interface QueuedCall {
  kind: CallKind;
  /** Organization id ('' when none): the unit of fairness and of the per-organization bound. */
  org: string;
  /** How long the call may run once dispatched. */
  timeoutMs: number;
  /** Epoch ms by which the caller needs the answer (its activity times out then); Infinity when none. */
  deadline: number;
  /** Aborted when the caller gives up: a waiting call then leaves the queue. */
  signal?: AbortSignal;
  /** The call did not run; called once, instead of a dispatch. */
  shed(reason: ShedReason): void;
}

export interface CallQueueStats {
  queued: number;
  /** The most calls one organization had waiting at once. */
  peakQueuedPerOrganization: number;
  /** Calls sent to a server. */
  dispatched: number;
  /** Calls that never ran, by reason. */
  shed: Record<ShedReason, number>;
}

/**
 * A call is only dispatched when it can still use its whole timeout and
 * answer before its deadline; this is the room kept for the answer to travel
 * back (and the node to store its outputs).
 */
export const DISPATCH_MARGIN_MS = 1_000;

interface Entry<C extends QueuedCall> {
  call: C;
  timer: NodeJS.Timeout | undefined;
  onAbort: (() => void) | undefined;
}

/**
 * The Python pool's waiting room: bounded per organization and in total,
 * fair across organizations, and never holding a call past the moment it
 * could still run in full before its deadline. Knows nothing of servers: the
 * pool says which kinds have room and how many calls one organization may run.
 */
export class CallQueue<C extends QueuedCall> {
  private entries: Entry<C>[] = [];
  private readonly waiting = new Map<string, number>();
  /** Calls in flight per organization. */
  private readonly running = new Map<string, number>();
  private peak = 0;
  private dispatched = 0;
  private readonly shedCounts: Record<ShedReason, number> = { organization: 0, total: 0, deadline: 0, cancelled: 0 };

  constructor(
    private readonly limits: QueueLimits,
    private readonly now: () => number = Date.now,
  ) {}

  get length(): number {
    return this.entries.length;
  }

  /** Calls of `kind` waiting for a server. */
  waitingOf(kind: CallKind): number {
    return this.entries.filter((e) => e.call.kind === kind).length;
  }

  /** Queues the call, or sheds it at once when a bound is reached or its deadline is already too close. */
  add(call: C): void {
    const refusal = this.refusal(call);
    if (refusal) {
      this.shedNow(call, refusal);
      return;
    }
    const room = this.room(call);
    const entry: Entry<C> = { call, timer: undefined, onAbort: undefined };
    if (Number.isFinite(room)) {
      entry.timer = setTimeout(() => this.remove(entry, 'deadline'), room);
      entry.timer.unref();
    }
    if (call.signal) {
      entry.onAbort = () => this.remove(entry, 'cancelled');
      call.signal.addEventListener('abort', entry.onAbort, { once: true });
    }
    this.entries.push(entry);
    const waiting = (this.waiting.get(call.org) ?? 0) + 1;
    this.waiting.set(call.org, waiting);
    this.peak = Math.max(this.peak, waiting);
  }

  /**
   * The next call to dispatch, taken out of the queue and counted as running:
   * the oldest call of the organization with the fewest calls in flight that
   * is under `capFor` its kind and for whose kind `serverFor` has a server.
   * Calls found past their dispatch moment on the way are shed (their timer
   * may be late on a busy event loop).
   */
  next<S>(serverFor: (kind: CallKind) => S | null, capFor: (kind: CallKind) => number): { call: C; server: S } | null {
    let best: { entry: Entry<C>; server: S; load: number } | null = null;
    for (const entry of [...this.entries]) {
      const { call } = entry;
      if (this.room(call) < 0) {
        this.remove(entry, 'deadline');
        continue;
      }
      const load = this.running.get(call.org) ?? 0;
      if (load >= capFor(call.kind) || (best && best.load <= load)) continue;
      const server = serverFor(call.kind);
      if (server) best = { entry, server, load };
    }
    if (!best) return null;
    this.take(best.entry);
    this.running.set(best.entry.call.org, best.load + 1);
    this.dispatched += 1;
    return { call: best.entry.call, server: best.server };
  }

  /** A dispatched call ended (answered or failed). */
  finished(call: C): void {
    const load = (this.running.get(call.org) ?? 1) - 1;
    if (load > 0) this.running.set(call.org, load);
    else this.running.delete(call.org);
  }

  /** Takes every waiting call that `match` selects out of the queue (the caller answers them). */
  takeAll(match: (call: C) => boolean): C[] {
    const taken = this.entries.filter((e) => match(e.call));
    for (const entry of taken) this.take(entry);
    return taken.map((e) => e.call);
  }

  stats(): CallQueueStats {
    return {
      queued: this.entries.length,
      peakQueuedPerOrganization: this.peak,
      dispatched: this.dispatched,
      shed: { ...this.shedCounts },
    };
  }

  private refusal(call: C): ShedReason | null {
    if (call.signal?.aborted) return 'cancelled';
    if ((this.waiting.get(call.org) ?? 0) >= this.limits.perOrganization) return 'organization';
    if (this.entries.length >= this.limits.total) return 'total';
    return this.room(call) < 0 ? 'deadline' : null;
  }

  /** Ms left until the call can no longer run in full before its deadline (negative: too late already). */
  private room(call: C): number {
    return call.deadline - call.timeoutMs - DISPATCH_MARGIN_MS - this.now();
  }

  private shedNow(call: C, reason: ShedReason): void {
    this.shedCounts[reason] += 1;
    call.shed(reason);
  }

  private remove(entry: Entry<C>, reason: ShedReason): void {
    if (!this.entries.includes(entry)) return;
    this.take(entry);
    this.shedNow(entry.call, reason);
  }

  private take(entry: Entry<C>): void {
    this.entries = this.entries.filter((e) => e !== entry);
    clearTimeout(entry.timer);
    if (entry.onAbort) entry.call.signal?.removeEventListener('abort', entry.onAbort);
    const waiting = (this.waiting.get(entry.call.org) ?? 1) - 1;
    if (waiting > 0) this.waiting.set(entry.call.org, waiting);
    else this.waiting.delete(entry.call.org);
  }
}
