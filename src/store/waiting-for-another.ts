/** How often a process still waiting for another says so. */
const WAITING_SAID_EVERY_MS = 30_000;

export interface Waiting {
  /** The pause between two attempts. */
  pollMs: number;
  /**
   * Told at the first attempt that meets the other process, then every 30 s while it waits: a start that waits
   * minutes in silence looks hung.
   */
  onWaiting: () => void;
  /** Past this long (from the first attempt), `gaveUp`'s error is thrown instead of trying again. */
  limit?: { ms: number; gaveUp: () => Error };
}

/**
 * A start's wait for another process holding what it needs (a lock): `attempt` again and again until it answers
 * something other than undefined (undefined: the other process still holds it).
 */
export async function waitingForAnother<T>(attempt: () => Promise<T | undefined>, waiting: Waiting): Promise<T> {
  const startedAt = Date.now();
  let saidAt: number | undefined;
  for (;;) {
    const answer = await attempt();
    if (answer !== undefined) return answer;
    if (waiting.limit && Date.now() - startedAt >= waiting.limit.ms) throw waiting.limit.gaveUp();
    if (saidAt === undefined || Date.now() - saidAt >= WAITING_SAID_EVERY_MS) {
      saidAt = Date.now();
      waiting.onWaiting();
    }
    await new Promise((resolve) => setTimeout(resolve, waiting.pollMs));
  }
}
