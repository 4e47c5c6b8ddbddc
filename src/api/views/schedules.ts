import type { z } from 'zod';
import type { CaseStatus } from '../../domain/cases.js';
import type { ScheduleDetails } from '../../schedules/schedule-service.js';
import type { FiringRecord, ScheduleRecord } from '../../domain/schedules.js';
import { temporalScheduleId } from '../../temporal/contracts/scheduled-case.js';
import type { firingSchema, scheduleDetailsSchema, scheduleListSchema, scheduleSchema } from '../schemas/schedules.js';
import type { Page } from '../../domain/page.js';

function scheduleView(r: ScheduleRecord): z.infer<typeof scheduleSchema> {
  const { timing } = r;
  return {
    scheduleId: r.id,
    workflowId: r.workflowId,
    workspaceId: r.workspaceId,
    workflowVersionId: r.workflowVersionId,
    title: r.title,
    cron: timing.cron ?? null,
    intervalSeconds: timing.intervalMs === undefined ? null : timing.intervalMs / 1000,
    offsetSeconds: timing.intervalMs === undefined ? null : (timing.offsetMs ?? 0) / 1000,
    timeZone: timing.timeZone,
    startAt: timing.startAt ?? null,
    endAt: timing.endAt ?? null,
    inputs: r.inputs,
    callbackUrl: r.callbackUrl,
    overlap: r.overlap,
    catchupWindowSeconds: r.catchupWindowMs / 1000,
    paused: r.paused,
    temporalScheduleId: temporalScheduleId(r.id),
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

function firingView(f: FiringRecord): z.infer<typeof firingSchema> {
  return {
    firingId: f.id,
    scheduledAt: f.scheduledAt,
    firedAt: f.createdAt,
    status: f.status,
    caseId: f.caseId,
    caseStatus: f.caseStatus as CaseStatus | null,
    error: f.error,
    temporalWorkflowId: f.temporalWorkflowId,
  };
}

export function scheduleDetailsView({
  record,
  state,
  firings,
}: ScheduleDetails): z.infer<typeof scheduleDetailsSchema> {
  return {
    ...scheduleView(record),
    // Temporal's paused state wins: the Temporal UI (or pause-on-failure) may have changed it.
    paused: state?.paused ?? record.paused,
    inEngine: state !== undefined,
    note: state?.note ?? null,
    nextRunTimes: state?.nextRunTimes ?? [],
    runningFirings: state?.running ?? 0,
    skippedOverlap: state?.skippedOverlap ?? 0,
    missedCatchupWindow: state?.missedCatchupWindow ?? 0,
    recentFirings: firings.map(firingView),
  };
}

export function scheduleListView(page: Page<ScheduleRecord>): z.infer<typeof scheduleListSchema> {
  return { items: page.items.map(scheduleView), nextCursor: page.nextCursor };
}
