import { expect } from 'vitest';
import type { paths } from '../../src/client/index.js';
import { answered, answeredEmpty, type TestResponse, type TestService } from '../support/harness.js';

export type ScheduleBody =
  paths['/api/v1/schedules/{scheduleId}']['get']['responses'][200]['content']['application/json'];
export type Firing = ScheduleBody['recentFirings'][number];
type CreateBody =
  paths['/api/v1/workflow/{workflowId}/schedules']['post']['requestBody']['content']['application/json'];

export async function createSchedule(svc: TestService, workflowId: string, body: CreateBody): Promise<ScheduleBody> {
  return answered(
    svc.client.POST('/api/v1/workflow/{workflowId}/schedules', { params: { path: { workflowId } }, body }),
    201,
  );
}

export async function getSchedule(svc: TestService, scheduleId: string): Promise<ScheduleBody> {
  return answered(svc.client.GET('/api/v1/schedules/{scheduleId}', { params: { path: { scheduleId } } }), 200);
}

/** The status DELETE answered (204, or 404 once gone). */
export async function deleteSchedule(svc: TestService, scheduleId: string): Promise<number> {
  return (await svc.client.DELETE('/api/v1/schedules/{scheduleId}', { params: { path: { scheduleId } } })).response
    .status;
}

/** Fires the schedule now (202, no body). */
export async function trigger(svc: TestService, scheduleId: string): Promise<void> {
  await answeredEmpty(
    svc.client.POST('/api/v1/schedules/{scheduleId}/trigger', { params: { path: { scheduleId } } }),
    202,
  );
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

/** The field names of a 400's metadata.fields, from a raw request or a typed client call. */
export function badFields(
  r: TestResponse | { response: Response; error?: { metadata?: Record<string, unknown> } },
): string[] {
  const [status, metadata] = 'response' in r ? [r.response.status, r.error?.metadata] : [r.status, r.body.metadata];
  expect(status, JSON.stringify(metadata)).toBe(400);
  return (metadata as { fields: Array<{ field: string }> }).fields.map((f) => f.field);
}
