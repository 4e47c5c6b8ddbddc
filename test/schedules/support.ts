import { expect } from 'vitest';
import type { TestResponse, TestService } from '../support/harness.js';

export interface Firing {
  firingId: string;
  scheduledAt: string;
  firedAt: string;
  status: 'started' | 'failed';
  caseId: string | null;
  caseStatus: string | null;
  error: string | null;
}

export interface ScheduleBody {
  scheduleId: string;
  paused: boolean;
  inEngine: boolean;
  runningFirings: number;
  nextRunTimes: string[];
  recentFirings: Firing[];
  skippedOverlap: number;
  [field: string]: unknown;
}

export async function createSchedule(
  svc: TestService,
  workflowId: string,
  body: Record<string, unknown>,
): Promise<ScheduleBody> {
  const r = await svc.request('POST', `/api/v1/workflow/${workflowId}/schedules`, { body });
  expect(r.status, r.text).toBe(201);
  return r.body as ScheduleBody;
}

export async function getSchedule(svc: TestService, scheduleId: string): Promise<ScheduleBody> {
  const r = await svc.request('GET', `/api/v1/schedules/${scheduleId}`);
  expect(r.status, r.text).toBe(200);
  return r.body as ScheduleBody;
}

/** Polls the schedule until `done` holds of it; fails after `timeoutMs`. */
export async function waitForSchedule(
  svc: TestService,
  scheduleId: string,
  done: (s: ScheduleBody) => boolean,
  timeoutMs = 40_000,
): Promise<ScheduleBody> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const s = await getSchedule(svc, scheduleId);
    if (done(s)) return s;
    if (Date.now() > until)
      throw new Error(`schedule ${scheduleId} not there after ${timeoutMs} ms: ${JSON.stringify(s)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

export const ended = (f: Firing) => ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT'].includes(f.caseStatus ?? '');

/** The field names of a 400's metadata.fields. */
export function badFields(r: TestResponse): string[] {
  expect(r.status, r.text).toBe(400);
  const fields = (r.body.metadata as { fields: Array<{ field: string }> }).fields;
  return fields.map((f) => f.field);
}
