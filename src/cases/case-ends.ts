/** Watching one case's end: `next` waits for it (or a time bound), `close` stops watching. */
export interface CaseEndWatch {
  /** Resolves when the case has ended in this process since the watch began, or after `ms`. */
  next(ms: number): Promise<void>;
  close(): void;
}

/**
 * Case ends recorded by this process, told to whoever waits on them here (a sync hook's delivery).
 * Only a hint that makes a waiter read the store now rather than at its next poll: a case finished by
 * another process (split roles) or by the reconciler is not announced, so waiters keep polling too.
 */
export class CaseEnds {
  private readonly watchers = new Map<string, Set<() => void>>();

  /** Called once the case's end is committed to the store. */
  ended(caseId: string): void {
    for (const wake of this.watchers.get(caseId) ?? []) wake();
  }

  /** Starts watching before the caller reads the case: an end between the read and the wait is not missed. */
  watch(caseId: string): CaseEndWatch {
    let ended = false;
    let resolveWait: (() => void) | undefined;
    const wake = () => {
      ended = true;
      resolveWait?.();
    };
    const set = this.watchers.get(caseId) ?? new Set();
    set.add(wake);
    this.watchers.set(caseId, set);
    return {
      next: (ms) =>
        ended
          ? Promise.resolve()
          : new Promise<void>((resolve) => {
              const done = () => {
                clearTimeout(timer);
                resolveWait = undefined;
                resolve();
              };
              const timer = setTimeout(done, ms);
              resolveWait = done;
            }),
      close: () => {
        set.delete(wake);
        if (set.size === 0 && this.watchers.get(caseId) === set) this.watchers.delete(caseId);
      },
    };
  }
}
