import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type CaseflowClient, type paths } from '../../src/client/index.js';
import { newCaller, newKey } from '../support/keys.js';
import { answered, startTestService, type TestService } from '../support/harness.js';
import { createWorkflow } from '../cases/support.js';
import { py, textChain } from '../support/graphs.js';
import { badFields, createSchedule, deleteSchedule, getSchedule } from './support.js';

let svc: TestService;
let workflowId: string;
let as: { otherOrg: CaseflowClient; readOnly: CaseflowClient; noCase: CaseflowClient };
beforeAll(async () => {
  svc = await startTestService({ config: { schedules: { minIntervalSeconds: 30, maxBackfillFirings: 5 } } });
  ({ workflowId } = await createWorkflow(svc, textChain('Echo', py('return {"text": inputs["text"]}'))));
  const client = (key: string) => createClient({ baseUrl: svc.url, key });
  as = {
    otherOrg: client((await newCaller(svc, ['case:full', 'workflow:full', 'file:full'])).key),
    readOnly: client((await newKey(svc, ['case:read', 'workflow:read'])).key),
    noCase: client((await newKey(svc, ['workflow:full'])).key),
  };
});
afterAll(async () => {
  // Temporal Schedules outlive the service (that is their point): leave none firing into this test's task queue.
  const left = await list({ limit: 100 });
  for (const s of left.items) await deleteSchedule(svc, s.scheduleId);
  await svc?.stop();
});

type PatchBody = NonNullable<
  paths['/api/v1/schedules/{scheduleId}']['patch']['requestBody']
>['content']['application/json'];

const hourly = { cron: '0 * * * *', timeZone: 'Europe/Paris', inputs: { text: 'x' } };
const list = (query: { workflowId?: string; workspaceId?: string; limit?: number; cursor?: string }) =>
  answered(svc.client.GET('/api/v1/schedules', { params: { query } }), 200);
const count = async () => (await list({ limit: 100 })).items.length;

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
      // Untyped: these bodies are what the contract refuses.
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
    const patch = (body: PatchBody) =>
      svc.client.PATCH('/api/v1/schedules/{scheduleId}', { params: { path: { scheduleId: s.scheduleId } }, body });
    const r = await answered(
      patch({ intervalSeconds: 3600, timeZone: 'UTC', overlap: 'buffer_one', title: null }),
      200,
    );
    expect(r).toMatchObject({ cron: null, intervalSeconds: 3600, overlap: 'buffer_one', title: null });
    for (const t of r.nextRunTimes) expect(t).toMatch(/T\d\d:00:00/);
    expect(badFields(await patch({ inputs: { text: 1 } }))).toContain('body.inputs.text');
    expect((await getSchedule(svc, s.scheduleId)).inputs).toEqual({ text: 'x' });
  });

  it('lists schedules a page at a time, filtered by workflow and workspace', async () => {
    const { workflowId: other } = await createWorkflow(svc, textChain('Other', py('return {"text": "o"}')));
    const a = await createSchedule(svc, other, hourly);
    const b = await createSchedule(svc, other, hourly);
    const first = await list({ workflowId: other, limit: 1 });
    expect(first.items.map((x) => x.scheduleId)).toEqual([b.scheduleId]);
    const second = await list({ workflowId: other, limit: 1, cursor: String(first.nextCursor) });
    expect(second.items.map((x) => x.scheduleId)).toEqual([a.scheduleId]);
    expect(second.nextCursor).toBeNull();
    expect((await list({ workspaceId: crypto.randomUUID() })).items).toEqual([]);
  });

  it("answers 404 to another organization's key for everything, and 403 without the grants", async () => {
    const s = await createSchedule(svc, workflowId, hourly);
    const path = { scheduleId: s.scheduleId };
    const c = as.otherOrg;
    const calls = [
      () => c.GET('/api/v1/schedules/{scheduleId}', { params: { path } }),
      () => c.PATCH('/api/v1/schedules/{scheduleId}', { params: { path }, body: { paused: true } }),
      () => c.DELETE('/api/v1/schedules/{scheduleId}', { params: { path } }),
      () => c.POST('/api/v1/schedules/{scheduleId}/pause', { params: { path } }),
      () => c.POST('/api/v1/schedules/{scheduleId}/resume', { params: { path } }),
      () => c.POST('/api/v1/schedules/{scheduleId}/trigger', { params: { path } }),
      () =>
        c.POST('/api/v1/schedules/{scheduleId}/backfill', {
          params: { path },
          body: { startAt: '2026-01-01T00:00:00Z', endAt: '2026-01-01T01:00:00Z' },
        }),
      () => c.POST('/api/v1/workflow/{workflowId}/schedules', { params: { path: { workflowId } }, body: hourly }),
    ];
    for (const call of calls) {
      const { response, error } = await call();
      expect(response.status, `${response.url}: ${JSON.stringify(error)}`).toBe(404);
    }
    expect((await answered(as.otherOrg.GET('/api/v1/schedules'), 200)).items).toEqual([]);
    const readOnly = await as.readOnly.POST('/api/v1/schedules/{scheduleId}/pause', { params: { path } });
    expect(readOnly.response.status).toBe(403);
    await answered(as.readOnly.GET('/api/v1/schedules/{scheduleId}', { params: { path } }), 200);
    const noCase = await as.noCase.POST('/api/v1/schedules/{scheduleId}/trigger', { params: { path } });
    expect(noCase.response.status).toBe(403);
    const create = await as.noCase.POST('/api/v1/workflow/{workflowId}/schedules', {
      params: { path: { workflowId } },
      body: hourly,
    });
    expect(create.response.status).toBe(403);
    const after = await getSchedule(svc, s.scheduleId);
    expect(after).toMatchObject({ paused: false, recentFirings: [] });
    // Without Case: Full a key may stop the firings, not start them again (resumed, they make cases).
    await answered(as.noCase.POST('/api/v1/schedules/{scheduleId}/pause', { params: { path } }), 200);
    const resume = await as.noCase.POST('/api/v1/schedules/{scheduleId}/resume', { params: { path } });
    expect(resume.response.status).toBe(403);
    expect(await getSchedule(svc, s.scheduleId)).toMatchObject({ paused: true });
  });

  it('bounds a backfill: past times only, at most schedules.maxBackfillFirings', async () => {
    const s = await createSchedule(svc, workflowId, { ...hourly, paused: true });
    const backfill = (startAt: string, endAt: string) =>
      svc.client.POST('/api/v1/schedules/{scheduleId}/backfill', {
        params: { path: { scheduleId: s.scheduleId } },
        body: { startAt, endAt },
      });
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
    const path = { scheduleId: s.scheduleId };
    const pause = await svc.client.POST('/api/v1/schedules/{scheduleId}/pause', { params: { path } });
    expect(pause.response.status).toBe(409);
    await answered(svc.client.PATCH('/api/v1/schedules/{scheduleId}', { params: { path }, body: {} }), 200);
    const repaired = await getSchedule(svc, s.scheduleId);
    expect(repaired.inEngine).toBe(true);
    expect(repaired.nextRunTimes.length).toBeGreaterThan(0);
    expect(await deleteSchedule(svc, s.scheduleId)).toBe(204);
    expect(await deleteSchedule(svc, s.scheduleId)).toBe(404);
  });
});
