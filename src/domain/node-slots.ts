/**
 * The per-case cap on activity nodes running at once: at most `limit` nodes
 * hold a slot, the others wait in the order they became ready. Pure and
 * deterministic (the case-run workflow imports it).
 */
export class NodeSlots {
  private held = 0;
  private readonly waiting: string[] = [];

  constructor(readonly limit: number) {}

  /** A node became ready: true when it takes a slot now, false when it waits for one. */
  take(id: string): boolean {
    if (this.held < this.limit && this.waiting.length === 0) {
      this.held += 1;
      return true;
    }
    this.waiting.push(id);
    return false;
  }

  /** A node holding a slot ended: the waiting node that takes its slot, if one waits. */
  release(): string | undefined {
    const next = this.waiting.shift();
    if (next === undefined) this.held = Math.max(0, this.held - 1);
    return next;
  }

  /** Nodes waiting for a slot, oldest first. */
  queued(): readonly string[] {
    return this.waiting;
  }
}
