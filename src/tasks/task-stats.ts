import type { TaskStatsRow } from '../store/task-repo.js';

/** One workspace's tasks: waiting now, closed in the window, and how long people took to decide. */
export interface WorkspaceTaskStats {
  workspaceId: string;
  /** Waiting for a decision now (whatever the window): open, claimed. */
  open: number;
  claimed: number;
  /** Closed in the window, by how. */
  completed: number;
  expired: number;
  cancelled: number;
  /** From opening to the decision, over the tasks completed in the window; null when none was. */
  decisionSeconds: { count: number; mean: number; max: number } | null;
}

export interface TaskStats {
  from: string;
  to: string;
  workspaces: WorkspaceTaskStats[];
}

/** Folds the per-status rows of the store into one entry per workspace (rows come ordered by workspace). */
export function workspaceTaskStats(rows: TaskStatsRow[]): WorkspaceTaskStats[] {
  const byWorkspace = new Map<string, WorkspaceTaskStats>();
  for (const row of rows) {
    const entry = byWorkspace.get(row.workspaceId) ?? {
      workspaceId: row.workspaceId,
      open: 0,
      claimed: 0,
      completed: 0,
      expired: 0,
      cancelled: 0,
      decisionSeconds: null,
    };
    byWorkspace.set(row.workspaceId, entry);
    entry[row.status] = row.tasks;
    // Only completed tasks have a decision time: one row per workspace carries them.
    if (row.maxSeconds !== null && row.decided > 0)
      entry.decisionSeconds = { count: row.decided, mean: row.totalSeconds / row.decided, max: row.maxSeconds };
  }
  return [...byWorkspace.values()];
}
