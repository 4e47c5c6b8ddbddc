import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newCaller, newKey } from '../support/keys.js';
import { startTestService, type TestService } from '../support/harness.js';
import { createWorkflow } from '../cases/support.js';
import { py, textChain } from '../support/graphs.js';
import { badFields, createSchedule, getSchedule, type ScheduleBody } from './support.js';

let svc: TestService;
let workflowId: string;
let keys: { otherOrg: string; readOnly: string; noCase: string };
beforeAll(async () => {
  svc = await startTestService({ config: { schedules: { minIntervalSeconds: 30, maxBackfillFirings: 5 } } });
  ({ workflowId } = await createWorkflow(svc, textChain('Echo', py('return {"text": inputs["text"]}'))));
  keys = {
    otherOrg: (await newCaller(svc, ['case:full', 'workflow:full', 'file:full'])).key,
    readOnly: (await newKey(svc, ['case:read', 'workflow:read'])).key,
    noCase: (await newKey(svc, ['workflow:full'])).key,
  };
});
afterAll(async () => {
  // Temporal Schedules outlive the service (that is their point): leave none firing into this test's task queue.
  const left = await svc.request('GET', '/api/v1/schedules?limit=100');
  for (const s of left.body.items as ScheduleBody[]) await svc.request('DELETE', `/api/v1/schedules/${s.scheduleId}`);
  await svc?.stop();
});

const hourly = { cron: '0 * * * *', timeZone: 'Europe/Paris', inputs: { text: 'x' } };
const count = async () => ((await svc.request('GET', '/api/v1/schedules?limit=100')).body.items as unknown[]).length;

describe('schedule management', () => {
  it('refuses bad timing and inputs with a 400 naming the field, creating nothing', async () => {
    const before = await count();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...hourly, cron: '61 * * * *' }, 'body.cron'],
      [{ ...hourly, cron: '* * * *' }, 'body.cron'],
      [{ ...hourly, timeZone: 'Mars/Olympus' }, 'body.timeZone'],
      [{ inputs: { text: 'x' }, intervalSeconds: 5 }, 'body.intervalSeconds'],
      [{ inputs: { text: 'x' } }, 'body.cron'],
      [{ ...hourly, intervalSeconds: 60 }, 'body.cron'],
      [{ ...hourly, offsetSeconds: 30 }, 'body.offsetSeconds'],
      [{ ...hourly, startAt: '2030-01-02T00:00:00Z', endAt: '2030-01-01T00:00:00Z' }, 'body.endAt'],
      [{ ...hourly, inputs: {} }, 'body.inputs.text'],
      [{ ...hourly, inputs: { text: 5 } }, 'body.inputs.text'],
      [{ ...hourly, overlap: 'sometimes' }, 'body.overlap'],
      [{ ...hourly, catchupWindowSeconds: 10_000_000 }, 'body.catchupWindowSeconds'],
      [{ ...hourly, callbackUrl: 'http://169.254.169.254/latest' }, 'body.callbackUrl'],
    ];
    for (const [body, field] of cases) {
      const r = await svc.request('POST', `/api/v1/workflow/${workflowId}/schedules`, { body });
      expect(badFields(r), JSON.stringify(body)).toContain(field);
    }
    expect(await count()).toBe(before);
  });

  it('answers the schedule with its next run times in its time zone, and changes it with PATCH', async () => {
    const s = await createSchedule(svc, workflowId, { ...hourly, cron: '30 9 * * *', title: 'daily report' });
    expect(s).toMatchObject({
      cron: '30 9 * * *',
      timeZone: 'Europe/Paris',
      intervalSeconds: null,
      title: 'daily report',
    });
    expect(s.nextRunTimes.length).toBeGreaterThan(1);
    // 09:30 in Paris is 08:30 or 07:30 UTC depending on the season.
    for (const t of s.nextRunTimes) expect(t).toMatch(/T0[78]:30:00/);
    const r = await svc.request('PATCH', `/api/v1/schedules/${s.scheduleId}`, {
      body: { intervalSeconds: 3600, timeZone: 'UTC', overlap: 'buffer_one', title: null },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ cron: null, intervalSeconds: 3600, overlap: 'buffer_one', title: null });
    for (const t of r.body.nextRunTimes as string[]) expect(t).toMatch(/T\d\d:00:00/);
    const bad = await svc.request('PATCH', `/api/v1/schedules/${s.scheduleId}`, { body: { inputs: { text: 1 } } });
    expect(badFields(bad)).toContain('body.inputs.text');
    expect((await getSchedule(svc, s.scheduleId)).inputs).toEqual({ text: 'x' });
  });

  it('lists schedules a page at a time, filtered by workflow and workspace', async () => {
    const { workflowId: other } = await createWorkflow(svc, textChain('Other', py('return {"text": "o"}')));
    const a = await createSchedule(svc, other, hourly);
    const b = await createSchedule(svc, other, hourly);
    const first = await svc.request('GET', `/api/v1/schedules?workflowId=${other}&limit=1`);
    expect(first.status, first.text).toBe(200);
    expect((first.body.items as ScheduleBody[]).map((x) => x.scheduleId)).toEqual([b.scheduleId]);
    const second = await svc.request(
      'GET',
      `/api/v1/schedules?workflowId=${other}&limit=1&cursor=${String(first.body.nextCursor)}`,
    );
    expect((second.body.items as ScheduleBody[]).map((x) => x.scheduleId)).toEqual([a.scheduleId]);
    expect(second.body.nextCursor).toBeNull();
    const elsewhere = await svc.request('GET', `/api/v1/schedules?workspaceId=${crypto.randomUUID()}`);
    expect(elsewhere.body.items).toEqual([]);
  });

  it("answers 404 to another organization's key for everything, and 403 without the grants", async () => {
    const s = await createSchedule(svc, workflowId, hourly);
    const attacker = { key: keys.otherOrg };
    const calls: Array<[string, string, unknown?]> = [
      ['GET', `/api/v1/schedules/${s.scheduleId}`],
      ['PATCH', `/api/v1/schedules/${s.scheduleId}`, { paused: true }],
      ['DELETE', `/api/v1/schedules/${s.scheduleId}`],
      ['POST', `/api/v1/schedules/${s.scheduleId}/pause`],
      ['POST', `/api/v1/schedules/${s.scheduleId}/resume`],
      ['POST', `/api/v1/schedules/${s.scheduleId}/trigger`],
      [
        'POST',
        `/api/v1/schedules/${s.scheduleId}/backfill`,
        { startAt: '2026-01-01T00:00:00Z', endAt: '2026-01-01T01:00:00Z' },
      ],
      ['POST', `/api/v1/workflow/${workflowId}/schedules`, hourly],
    ];
    for (const [method, path, body] of calls) {
      const r = await svc.request(method, path, { ...attacker, body });
      expect(r.status, `${method} ${path}: ${r.text}`).toBe(404);
    }
    const listed = await svc.request('GET', '/api/v1/schedules', attacker);
    expect(listed.body.items).toEqual([]);
    const readOnly = await svc.request('POST', `/api/v1/schedules/${s.scheduleId}/pause`, { key: keys.readOnly });
    expect(readOnly.status).toBe(403);
    expect((await svc.request('GET', `/api/v1/schedules/${s.scheduleId}`, { key: keys.readOnly })).status).toBe(200);
    const noCase = await svc.request('POST', `/api/v1/schedules/${s.scheduleId}/trigger`, { key: keys.noCase });
    expect(noCase.status).toBe(403);
    const create = await svc.request('POST', `/api/v1/workflow/${workflowId}/schedules`, {
      key: keys.noCase,
      body: hourly,
    });
    expect(create.status).toBe(403);
    const after = await getSchedule(svc, s.scheduleId);
    expect(after).toMatchObject({ paused: false, recentFirings: [] });
  });

  it('bounds a backfill: past times only, at most schedules.maxBackfillFirings', async () => {
    const s = await createSchedule(svc, workflowId, { ...hourly, paused: true });
    const backfill = (startAt: string, endAt: string) =>
      svc.request('POST', `/api/v1/schedules/${s.scheduleId}/backfill`, { body: { startAt, endAt } });
    expect(badFields(await backfill('2026-01-01T00:00:00Z', '2026-01-01T10:00:00Z'))).toEqual(['body.startAt']);
    expect(badFields(await backfill('2026-01-01T02:00:00Z', '2026-01-01T01:00:00Z'))).toEqual(['body.endAt']);
    expect(badFields(await backfill('2026-01-01T00:10:00Z', '2026-01-01T00:20:00Z'))).toEqual(['body.startAt']);
    expect(badFields(await backfill('2026-01-01T00:00:00Z', '2099-01-01T00:00:00Z'))).toEqual(['body.endAt']);
  });

  it('shows a schedule Temporal lost as inEngine: false; PATCH re-creates it, DELETE removes it', async () => {
    const s = await createSchedule(svc, workflowId, hourly);
    await svc.service.context.temporal.client.schedule.getHandle(`schedule-${s.scheduleId}`).delete();
    const lost = await getSchedule(svc, s.scheduleId);
    expect(lost).toMatchObject({ inEngine: false, nextRunTimes: [] });
    const pause = await svc.request('POST', `/api/v1/schedules/${s.scheduleId}/pause`);
    expect(pause.status).toBe(409);
    expect((await svc.request('PATCH', `/api/v1/schedules/${s.scheduleId}`, { body: {} })).status).toBe(200);
    const repaired = await getSchedule(svc, s.scheduleId);
    expect(repaired.inEngine).toBe(true);
    expect(repaired.nextRunTimes.length).toBeGreaterThan(0);
    expect((await svc.request('DELETE', `/api/v1/schedules/${s.scheduleId}`)).status).toBe(204);
    expect((await svc.request('DELETE', `/api/v1/schedules/${s.scheduleId}`)).status).toBe(404);
  });
});
