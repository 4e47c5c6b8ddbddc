import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answered, startTestService, type TestService } from '../support/harness.js';
import { caseStatus, createWorkflow, results } from '../cases/support.js';
import { Graph, py, sleeper, textChain } from '../support/graphs.js';
import { createSchedule, deleteSchedule, ended, getSchedule, trigger, waitForSchedule } from './support.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ config: { schedules: { minIntervalSeconds: 1 } } });
});
afterAll(async () => {
  await svc?.stop();
});

const echo = () => textChain('Echo', py('return {"text": "echo:" + inputs["text"]}'));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const act = (scheduleId: string, action: 'pause' | 'resume') =>
  answered(svc.client.POST(`/api/v1/schedules/{scheduleId}/${action}`, { params: { path: { scheduleId } } }), 200);

describe('a schedule firing', () => {
  it('creates and runs a case per firing, with source scheduled, the schedule id and the case task timeout', async () => {
    const wf = await createWorkflow(svc, echo());
    const created = await createSchedule(svc, wf.workflowId, { intervalSeconds: 2, inputs: { text: 'tick' } });
    expect(created).toMatchObject({ inEngine: true, paused: false, overlap: 'skip', timeZone: 'UTC' });
    expect(created.nextRunTimes.length).toBeGreaterThan(0);
    expect(created.temporalScheduleId).toBe(`schedule-${created.scheduleId}`);
    // What the Temporal UI's Schedules page shows.
    const inTemporal = await svc.service.context.temporal.client.schedule
      .getHandle(created.temporalScheduleId)
      .describe();
    expect(inTemporal.action).toMatchObject({ type: 'startWorkflow', workflowType: 'scheduledCase' });
    const s = await waitForSchedule(svc, created.scheduleId, (x) => x.recentFirings.some(ended));
    const firing = s.recentFirings.find(ended);
    expect(firing).toMatchObject({ status: 'started', caseStatus: 'COMPLETED', error: null });
    const caseId = String(firing?.caseId);
    expect(await caseStatus(svc, caseId)).toMatchObject({
      source: 'scheduled',
      scheduleId: created.scheduleId,
      status: 'COMPLETED',
    });
    expect(await results(svc, caseId)).toMatchObject({ text: { value: 'echo:tick' } });
    // The firing's child run has the case workflow-task timeout (temporal.caseWorkflowTaskTimeoutMs), not Temporal's 10 s.
    const { raw } = await svc.service.context.temporal.client.workflow.getHandle(`case-${caseId}`).describe();
    expect(Number(raw.executionConfig?.defaultWorkflowTaskTimeout?.seconds)).toBe(60);
    expect(await deleteSchedule(svc, created.scheduleId)).toBe(204);
    const gone = await svc.client.GET('/api/v1/schedules/{scheduleId}', {
      params: { path: { scheduleId: created.scheduleId } },
    });
    expect(gone.response.status).toBe(404);
  });

  it('skips firings while the previous case still runs (overlap skip)', async () => {
    // The case outlasts the two skips however slowly the schedule's firings come, then is cancelled.
    const wf = await createWorkflow(svc, sleeper(20));
    const created = await createSchedule(svc, wf.workflowId, { intervalSeconds: 1, inputs: { text: 'slow' } });
    const s = await waitForSchedule(svc, created.scheduleId, (x) => x.skippedOverlap >= 2);
    // One case at a time: every firing but the running one was skipped.
    expect(s.recentFirings).toHaveLength(1);
    expect(s.recentFirings[0]).toMatchObject({ status: 'started', caseStatus: 'RUNNING' });
    await deleteSchedule(svc, created.scheduleId);
    const cancelled = await svc.request('POST', `/api/v1/case/${s.recentFirings[0]?.caseId}/cancel`);
    expect(cancelled.status, cancelled.text).toBe(200);
  });

  it('cancels the running case when the next firing comes (overlap cancel_previous)', async () => {
    const wf = await createWorkflow(svc, sleeper(20));
    const created = await createSchedule(svc, wf.workflowId, {
      intervalSeconds: 3,
      inputs: { text: 'slow' },
      overlap: 'cancel_previous',
    });
    const s = await waitForSchedule(svc, created.scheduleId, (x) =>
      x.recentFirings.some((f) => f.caseStatus === 'CANCELLED'),
    );
    await deleteSchedule(svc, created.scheduleId);
    expect(s.recentFirings.filter((f) => f.caseStatus === 'RUNNING').length).toBeLessThanOrEqual(1);
  });

  it('records a firing whose workflow is inactive or whose inputs no longer validate as failed, with why', async () => {
    const wf = await createWorkflow(svc, echo());
    const created = await createSchedule(svc, wf.workflowId, { cron: '0 0 1 1 *', inputs: { text: 'x' } });
    // Inputs no longer valid: the new active version wants a number `n` too.
    const g = new Graph();
    const input = g.input([{ name: 'text' }, { name: 'n', type: 'int' }]);
    const output = g.output([{ name: 'text' }]);
    g.edge(input, output);
    await answered(
      svc.client.PATCH('/api/v1/workflow/{workflowId}', {
        params: { path: { workflowId: wf.workflowId } },
        body: { nodes: g.nodes, edges: g.edges },
      }),
      200,
    );
    await trigger(svc, created.scheduleId);
    let s = await waitForSchedule(svc, created.scheduleId, (x) => x.recentFirings.length === 1);
    expect(s.recentFirings[0]).toMatchObject({ status: 'failed', caseId: null });
    expect(s.recentFirings[0]?.error).toContain('body.inputs.n');
    // No active version at all. (Firings are named by their time to the second: a second trigger waits for the next.)
    await sleep(1100);
    await answered(
      svc.client.POST('/api/v1/workflow/{workflowId}/deactivate', {
        params: { path: { workflowId: wf.workflowId } },
        body: {},
      }),
      200,
    );
    await trigger(svc, created.scheduleId);
    s = await waitForSchedule(svc, created.scheduleId, (x) => x.recentFirings.length === 2);
    expect(s.recentFirings[0]).toMatchObject({ status: 'failed', caseId: null });
    expect(s.recentFirings[0]?.error).toContain('no active version');
    await deleteSchedule(svc, created.scheduleId);
  });

  it('pauses, resumes, and fires on demand', async () => {
    const wf = await createWorkflow(svc, echo());
    const created = await createSchedule(svc, wf.workflowId, {
      intervalSeconds: 2,
      inputs: { text: 'p' },
      paused: true,
    });
    expect(created.paused).toBe(true);
    await sleep(3000);
    expect((await getSchedule(svc, created.scheduleId)).recentFirings).toHaveLength(0);
    // A trigger fires even while paused.
    await trigger(svc, created.scheduleId);
    const triggered = await waitForSchedule(svc, created.scheduleId, (x) => x.recentFirings.some(ended));
    expect(triggered.recentFirings).toHaveLength(1);
    expect(await act(created.scheduleId, 'resume')).toMatchObject({ paused: false });
    await waitForSchedule(svc, created.scheduleId, (x) => x.recentFirings.filter(ended).length >= 2);
    const paused = await act(created.scheduleId, 'pause');
    expect(paused).toMatchObject({ paused: true });
    expect(paused.note).toContain('paused through the API');
    // A firing started just before the pause records itself when its workflow runs: count once none runs.
    await waitForSchedule(svc, created.scheduleId, (x) => x.paused && x.inEngine && x.runningFirings === 0);
    const count = (await getSchedule(svc, created.scheduleId)).recentFirings.length;
    await sleep(3000);
    expect((await getSchedule(svc, created.scheduleId)).recentFirings).toHaveLength(count);
    await deleteSchedule(svc, created.scheduleId);
  });

  it('backfills the times of a past range, each case with the time it was for', async () => {
    const wf = await createWorkflow(svc, echo());
    const created = await createSchedule(svc, wf.workflowId, {
      cron: '0 * * * *',
      inputs: { text: 'b' },
      paused: true,
    });
    const r = await answered(
      svc.client.POST('/api/v1/schedules/{scheduleId}/backfill', {
        params: { path: { scheduleId: created.scheduleId } },
        body: { startAt: '2026-01-01T00:00:00Z', endAt: '2026-01-01T02:00:00Z' },
      }),
      202,
    );
    expect(r).toEqual({ scheduleId: created.scheduleId, firings: 3 });
    const s = await waitForSchedule(svc, created.scheduleId, (x) => x.recentFirings.filter(ended).length === 3);
    expect(s.recentFirings.map((f) => f.scheduledAt).sort()).toEqual([
      '2026-01-01T00:00:00.000Z',
      '2026-01-01T01:00:00.000Z',
      '2026-01-01T02:00:00.000Z',
    ]);
    expect(s.recentFirings.every((f) => f.caseStatus === 'COMPLETED')).toBe(true);
    await deleteSchedule(svc, created.scheduleId);
  });
});
