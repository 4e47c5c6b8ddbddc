/**
 * Changes to the commands the case run issues, oldest first. A run records
 * at start how many of them the starting code knew (CaseRunInput.revision):
 * those are in force for it without asking. A run started before a change
 * (no revision, or a lower one) asks `patched()` as the change always did,
 * so its history replays. Asking costs a marker event and an upsert of the
 * TemporalChangeVersion search attribute per change and run; recording the
 * revision costs nothing per run.
 *
 * A new change is appended here and, in the workflow, guarded by
 * `changeInForce(input, '<id>')`: never reorder or remove an entry.
 */
export const caseRunChanges = [
  'callback-first-attempt-in-run',
  'case-status-search-attribute',
  'case-node-concurrency-cap',
  'case-end-in-one-local-activity',
  // Recorded histories (test/nodes/histories/subflow-*.bin) started at revision 5: this one stays fifth.
  'call-workflow-child-case',
  'human-task-waits',
  'case-rerun-reused-nodes',
  'creator-key-recheck',
  'call-workflow-deadline-after-waits',
  'case-node-outcomes-in-turn',
  'human-task-null-due-date',
  'case-last-node-and-end-fused',
] as const;

export type CaseRunChange = (typeof caseRunChanges)[number];

/** The revision runs started by this code record. */
export const caseRunRevision = caseRunChanges.length;

/** Whether a run that recorded `revision` at start knew `change` (true: no patch marker needed). */
export function knownAtStart(revision: number | undefined, change: CaseRunChange): boolean {
  return caseRunChanges.indexOf(change) < (revision ?? 0);
}
