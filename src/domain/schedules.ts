/** What a schedule does when a firing finds an earlier one still running (Temporal's overlap policies). */
export const overlapPolicies = ['skip', 'buffer_one', 'allow_all', 'cancel_previous'] as const;
export type OverlapPolicy = (typeof overlapPolicies)[number];

/** When a schedule fires: a cron expression or a fixed interval, in an IANA time zone, within optional bounds. */
export type ScheduleTiming = (
  | { cron: string; intervalMs?: undefined; offsetMs?: undefined }
  | { cron?: undefined; intervalMs: number; offsetMs?: number }
) & {
  timeZone: string;
  /** ISO times: no firing before startAt or after endAt. */
  startAt?: string;
  endAt?: string;
};

/** What the firing workflow reports: the case it ran, or why none was created. */
export type FiringOutcome =
  | { firing: 'started'; caseId: string; status: string }
  /** The case waits over a concurrency cap; its run starts when it takes a slot, not as the firing's child. */
  | { firing: 'queued'; caseId: string }
  | { firing: 'failed'; error: string }
  | { firing: 'orphan' };

export interface ScheduleRecord {
  id: string;
  organizationId: string;
  workspaceId: string;
  workflowId: string;
  workflowVersionId: string | null;
  title: string | null;
  timing: ScheduleTiming;
  inputs: Record<string, unknown>;
  callbackUrl: string | null;
  overlap: OverlapPolicy;
  catchupWindowMs: number;
  paused: boolean;
  createdByKeyId: string;
  createdByUserId: string;
  createdAt: string;
  updatedAt: string;
}

export interface FiringRecord {
  id: string;
  scheduleId: string;
  temporalWorkflowId: string;
  scheduledAt: string;
  status: 'started' | 'failed';
  caseId: string | null;
  /** The case's status now, for a started firing. */
  caseStatus: string | null;
  error: string | null;
  createdAt: string;
}
