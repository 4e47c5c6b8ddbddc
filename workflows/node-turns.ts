import { CancellationScope, condition } from '@temporalio/workflow';

type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

/**
 * The case run's node outcomes taken one at a time, in the order they arrived, each only once everything
 * the one before it set off has run.
 *
 * Why: local activities that ended one at a time when the run first went (each in its own activation)
 * are handed back together when it replays, their markers read ahead from the history. Taken as they
 * come, their continuations would interleave by how many awaits each path takes (a busy node's timer
 * needs fewer than a completed node's successor), so the replay could issue commands in another order
 * than the history has them: a nondeterminism error, and a run that no worker can take again
 * (docs/performance.md, "Overload: a run that could not replay"). A workflow condition is checked only
 * once every pending microtask has run; granting one turn per check gives the same order whether the
 * outcomes came apart or together.
 */
export class NodeTurns {
  private issued = 0;
  private served = 0;

  /** What `attempt` settles with, once its turn has come. */
  async of<T>(attempt: Promise<T>): Promise<T> {
    const settled = await attempt.then(
      (value): Settled<T> => ({ ok: true, value }),
      (error: unknown): Settled<T> => ({ ok: false, error }),
    );
    await this.turn();
    if (settled.ok) return settled.value;
    throw settled.error;
  }

  private async turn(): Promise<void> {
    const ticket = this.issued++;
    let checked = false;
    // Not cancellable: an outcome that arrived counts, even when the case is ending meanwhile.
    await CancellationScope.nonCancellable(() =>
      condition(() => {
        // The first check is made at once, amid other continuations: never the turn.
        const eager = !checked;
        checked = true;
        return !eager && this.served === ticket;
      }),
    );
    this.served += 1;
  }
}

/** `outcome` in its turn, or as it comes for a run started before outcomes took turns (no NodeTurns). */
export function inTurn<T>(turns: NodeTurns | undefined, outcome: Promise<T>): Promise<T> {
  return turns ? turns.of(outcome) : outcome;
}
