import { DomainError } from '../errors.js';
import type { CaseStatus } from '../domain/cases.js';
import type { CaseStatsRow } from '../store/case-repo.js';

/** What the caller asks for: a creation-time window, optionally one workspace or workflow. */
export interface CaseStatsRequest {
  workspaceId?: string;
  workflowId?: string;
  from?: string;
  to?: string;
}

/** One workflow's cases created in the window. */
export interface WorkflowCaseStats {
  workflowId: string;
  workspaceId: string;
  cases: number;
  byStatus: Partial<Record<CaseStatus, number>>;
  /** From execute to the end, over the cases that ran to an end; null when none did. */
  runSeconds: { count: number; mean: number; max: number } | null;
}

export interface CaseStats {
  from: string;
  to: string;
  workflows: WorkflowCaseStats[];
}

const DAY_MS = 24 * 3600 * 1000;
/** The window when none is given: the last day. */
export const defaultStatsWindowMs = DAY_MS;
/** The widest window: a month of cases is still one indexed range scan per organization. */
export const maxStatsWindowMs = 31 * DAY_MS;

/** The window as ISO times: `to` defaults to now, `from` to a day before `to`; at most 31 days. */
export function statsWindow(request: CaseStatsRequest, now = Date.now()): { from: string; to: string } {
  const to = request.to === undefined ? now : Date.parse(request.to);
  const from = request.from === undefined ? to - defaultStatsWindowMs : Date.parse(request.from);
  if (from >= to) throw DomainError.invalidFields([{ field: 'query.to', message: 'must be after from' }]);
  if (to - from > maxStatsWindowMs)
    throw DomainError.invalidFields([{ field: 'query.from', message: 'the window is at most 31 days' }]);
  return { from: new Date(from).toISOString(), to: new Date(to).toISOString() };
}

/** Folds the per-status rows of the store into one entry per workflow (rows come ordered by workflow). */
export function workflowStats(rows: CaseStatsRow[]): WorkflowCaseStats[] {
  const byWorkflow = new Map<string, WorkflowCaseStats & { timed: number; totalSeconds: number }>();
  for (const row of rows) {
    const entry = byWorkflow.get(row.workflowId) ?? {
      workflowId: row.workflowId,
      workspaceId: row.workspaceId,
      cases: 0,
      byStatus: {},
      runSeconds: null,
      timed: 0,
      totalSeconds: 0,
    };
    byWorkflow.set(row.workflowId, entry);
    entry.cases += row.cases;
    entry.byStatus[row.status] = row.cases;
    entry.timed += row.timed;
    entry.totalSeconds += row.totalSeconds;
    if (row.maxSeconds !== null) {
      entry.runSeconds = {
        count: entry.timed,
        mean: entry.totalSeconds / entry.timed,
        max: Math.max(entry.runSeconds?.max ?? 0, row.maxSeconds),
      };
    }
  }
  return [...byWorkflow.values()].map(({ timed: _timed, totalSeconds: _total, ...stats }) => stats);
}
