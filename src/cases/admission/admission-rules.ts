import type { QueuedCase } from '../../domain/admission.js';

/** Where an organization's slots stand during one admission pass; `admissible` moves it on. */
export interface SlotState {
  /** The organization's cap; null: none. */
  organizationCap: number | null;
  /** Slots the organization's cases hold. */
  held: number;
  /** Its fair share while other organizations are active (docs/concurrency.md#fair-share); null: not limited by one. */
  share: number | null;
  /** Slots counted against the share: held by runs younger than the fair share's runnableMs. */
  recent: number;
  /** Slots held per workflow (only the workflows of the queue read so far). */
  heldByWorkflow: Map<string, number>;
}

/** The organization has a free slot under its cap (or no cap) and within its fair share (or none applies). */
export function hasRoom(state: SlotState): boolean {
  const underCap = state.organizationCap === null || state.held < state.organizationCap;
  return underCap && (state.share === null || state.recent < state.share);
}

/**
 * Whether the admitting process is saturated, so the fair share engages: its event loop was busy at
 * least `threshold` of the recent window; a threshold of 0 is always (split roles, where the API
 * process does not see the workers' load).
 */
export function saturated(threshold: number, utilization: number): boolean {
  return threshold === 0 || utilization >= threshold;
}

/** What the fair share needs to know: the organizations contending and how they share the run budget. */
export interface FairShareRule {
  budget: number;
  floor: number;
}

/**
 * An organization's share of the run budget while `others` other organizations are active: the budget
 * split evenly over them and it, never below the floor; null (no limit) when it is alone.
 */
export function fairShare(rule: FairShareRule, others: number): number | null {
  if (others === 0) return null;
  return Math.max(rule.floor, Math.floor(rule.budget / (others + 1)));
}

/**
 * Which queued cases (oldest first) take a slot now: each in order while the organization has a
 * free slot, unless its workflow's own cap is full; it then waits, and so do the later cases of
 * that workflow (FIFO per workflow), while later cases of other workflows may go (a full workflow
 * does not hold back the rest of its organization). Returns the admitted cases and the workflows
 * found full, whose cases the next page may leave out.
 */
export function admissible(queue: QueuedCase[], state: SlotState): { admitted: QueuedCase[]; full: string[] } {
  const admitted: QueuedCase[] = [];
  const full = new Set<string>();
  for (const queued of queue) {
    if (!hasRoom(state)) break;
    const held = state.heldByWorkflow.get(queued.workflowId) ?? 0;
    if (queued.workflowCap !== null && held >= queued.workflowCap) {
      full.add(queued.workflowId);
      continue;
    }
    admitted.push(queued);
    state.held++;
    state.recent++;
    state.heldByWorkflow.set(queued.workflowId, held + 1);
  }
  return { admitted, full: [...full] };
}
