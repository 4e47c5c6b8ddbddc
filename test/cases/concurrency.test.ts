import { WorkflowNotFoundError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answered, refused, type TestService } from '../support/harness.js';
import { caseStatus, createWorkflow, peakOverlap, startCase, waitForEnd } from './support.js';
import { sleepingOrganization, startAdmissionService } from './admission-support.js';
import { sleeper } from '../support/graphs.js';
import { approvalGraph } from '../tasks/graphs.js';
import { createSchedule, waitForSchedule } from '../schedules/support.js';
import { temporalScheduleId } from '../../src/temporal/contracts/scheduled-case.js';

/**
 * Concurrency caps through the real service (docs/concurrency.md): the configured default (1 here),
 * the operator's override per organization, a workflow's own cap, cancel while queued, and another
 * organization running beside a full one. Slots are held by a Python step that sleeps.
 */
let svc: TestService;

beforeAll(async () => {
  svc = await startAdmissionService({ maxConcurrentPerOrganization: 1 });
});
afterAll(async () => {
  await svc?.stop();
});

async function setCap(organizationId: string, maxConcurrentCases: number | null) {
  const r = await svc.admin('PUT', `/admin/organizations/${organizationId}/concurrency`, { maxConcurrentCases });
  expect(r.status, r.text).toBe(200);
  return r.body;
}

describe('concurrency caps', () => {
  it('a cap of 2 with 5 cases: 2 run, 3 wait FIFO, each starts as a slot frees, never more than 2 at once', async () => {
    const before = await svc.admin('GET', `/admin/organizations/${svc.organizationId}/concurrency`);
    expect(before.body).toMatchObject({ maxConcurrentCases: 1, source: 'default', updatedAt: null });
    expect(await setCap(svc.organizationId, 2)).toMatchObject({ maxConcurrentCases: 2, source: 'organization' });

    const wf = await createWorkflow(svc, sleeper(2));
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await startCase(svc, wf.workflowId, { text: `case ${i}` }));
    const first = await Promise.all(ids.map((id) => caseStatus(svc, id)));
    expect(first.map((s) => s.status)).toEqual(['RUNNING', 'RUNNING', 'QUEUED', 'QUEUED', 'QUEUED']);
    for (const s of first.slice(0, 2)) expect(s.queuedAt).toBeNull();
    for (const s of first.slice(2)) {
      expect(typeof s.queuedAt).toBe('string');
      expect(s.startedAt).toBeNull();
    }
    const usage = await svc.admin('GET', `/admin/organizations/${svc.organizationId}/concurrency`);
    expect(usage.body).toMatchObject({ running: 2, queued: 3 });

    const ends = await Promise.all(ids.map((id) => waitForEnd(svc, id, 120_000)));
    expect(ends.map((e) => e.status)).toEqual(Array(5).fill('COMPLETED'));
    expect(peakOverlap(ends.map((e) => ({ start: String(e.startedAt), end: String(e.finishedAt) })))).toBe(2);
    // FIFO: the queued cases started in the order they were queued, each after it joined the queue.
    const starts = ends.slice(2).map((e) => Date.parse(String(e.startedAt)));
    expect([...starts].sort((a, b) => a - b)).toEqual(starts);
    for (const e of ends.slice(2))
      expect(Date.parse(String(e.startedAt))).toBeGreaterThan(Date.parse(String(e.queuedAt)));
    // The third case took the first slot freed.
    const firstEnd = Math.min(...ends.slice(0, 2).map((e) => Date.parse(String(e.finishedAt))));
    expect(starts[0]).toBeGreaterThanOrEqual(firstEnd);

    const registry = svc.service.context.metrics.registry;
    const histogram = await registry.getSingleMetricAsString('caseflow_case_queued_seconds');
    expect(histogram).toMatch(/caseflow_case_queued_seconds_count 5/);
    expect(await registry.getSingleMetricAsString('caseflow_cases_queued')).toMatch(/caseflow_cases_queued 0/);
  }, 180_000);

  it('cancels a queued case at once, with no Temporal run; the running one is untouched', async () => {
    await setCap(svc.organizationId, 1);
    const wf = await createWorkflow(svc, sleeper(2));
    const running = await startCase(svc, wf.workflowId, { text: 'runs' });
    const queued = await startCase(svc, wf.workflowId, { text: 'waits' });
    expect((await caseStatus(svc, queued)).status).toBe('QUEUED');

    const cancel = () => svc.client.POST('/api/v1/case/{caseId}/cancel', { params: { path: { caseId: queued } } });
    expect((await answered(cancel(), 200)).status).toBe('CANCELLED');
    const handle = svc.service.context.temporal.client.workflow.getHandle(`case-${queued}`);
    await expect(handle.describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
    await refused(cancel(), 409);

    expect((await waitForEnd(svc, running, 60_000)).status).toBe('COMPLETED');
    const after = await caseStatus(svc, queued);
    expect(after).toMatchObject({ status: 'CANCELLED', startedAt: null });
  }, 120_000);

  it("a workflow's own cap queues its cases while the organization's other workflows run", async () => {
    // null: no cap for this organization, whatever the configured default.
    expect(await setCap(svc.organizationId, null)).toMatchObject({ maxConcurrentCases: null, source: 'organization' });
    const capped = await createWorkflow(svc, sleeper(2));
    const cap = (maxConcurrentCases: number) =>
      svc.client.PATCH('/api/v1/workflow/{workflowId}', {
        params: { path: { workflowId: capped.workflowId } },
        body: { maxConcurrentCases },
      });
    await refused(cap(0), 400);
    await answered(cap(1), 200);
    const details = await answered(
      svc.client.GET('/api/v1/workflow/{workflowId}', { params: { path: { workflowId: capped.workflowId } } }),
      200,
    );
    expect(details.maxConcurrentCases).toBe(1);
    const free = await createWorkflow(svc, sleeper(2));

    const a = await startCase(svc, capped.workflowId, { text: 'a' });
    const b = await startCase(svc, capped.workflowId, { text: 'b' });
    const c = await startCase(svc, free.workflowId, { text: 'c' });
    expect([
      (await caseStatus(svc, a)).status,
      (await caseStatus(svc, b)).status,
      (await caseStatus(svc, c)).status,
    ]).toEqual(['RUNNING', 'QUEUED', 'RUNNING']);
    const [endA, endB] = await Promise.all([waitForEnd(svc, a, 60_000), waitForEnd(svc, b, 60_000)]);
    expect(endB.status).toBe('COMPLETED');
    expect(Date.parse(String(endB.startedAt))).toBeGreaterThanOrEqual(Date.parse(String(endA.finishedAt)));
    expect((await waitForEnd(svc, c, 60_000)).status).toBe('COMPLETED');
  }, 120_000);

  it("another organization is not held back by a full organization's queue", async () => {
    await setCap(svc.organizationId, 1);
    const { organizationId: orgB, client: asB, start: startB } = await sleepingOrganization(svc, 1);

    const wfA = await createWorkflow(svc, sleeper(3));
    const a1 = await startCase(svc, wfA.workflowId, { text: 'a1' });
    const a2 = await startCase(svc, wfA.workflowId, { text: 'a2' });
    expect((await caseStatus(svc, a2)).status).toBe('QUEUED');

    expect((await startB('b')).status).toBe('RUNNING');
    // Org B's cap (the default, 1) is its own: it runs while org A's case still waits.
    const other = await svc.admin('GET', `/admin/organizations/${orgB}/concurrency`);
    expect(other.body).toMatchObject({ maxConcurrentCases: 1, source: 'default', queued: 0 });
    expect((await caseStatus(svc, a2)).status).toBe('QUEUED');
    // Another organization's case reads as unknown.
    await refused(asB.GET('/api/v1/case/{caseId}/status', { params: { path: { caseId: a2 } } }), 404);
    expect((await svc.admin('GET', `/admin/organizations/${crypto.randomUUID()}/concurrency`)).status).toBe(404);

    for (const id of [a1, a2]) expect((await waitForEnd(svc, id, 60_000)).status).toBe('COMPLETED');
  }, 120_000);

  it('a case waiting on a person holds no slot; the decision takes it back, even above the cap', async () => {
    await setCap(svc.organizationId, 1);
    const approval = approvalGraph({ title: 'Approve {{ amount }}', assignee: { type: 'workspace' } });
    const waiting = await createWorkflow(svc, approval.graph, 'approval under a cap');
    const slow = await createWorkflow(svc, sleeper(3), 'slow under a cap');

    const a = await startCase(svc, waiting.workflowId, { amount: 5 });
    let taskId: string | undefined;
    for (const until = Date.now() + 60_000; !taskId && Date.now() < until;) {
      const list = await answered(
        svc.client.GET('/api/v1/tasks', { params: { query: { caseId: a, status: 'open' } } }),
        200,
      );
      taskId = list.items[0]?.taskId;
      if (!taskId) await new Promise((r) => setTimeout(r, 100));
    }
    expect(taskId, 'the task opened').toBeDefined();
    const usage = await svc.admin('GET', `/admin/organizations/${svc.organizationId}/concurrency`);
    expect(usage.body).toMatchObject({ running: 0, queued: 0 });

    // The waiting case holds nothing: the next case runs at once, the one after it waits for that one.
    const b = await startCase(svc, slow.workflowId, { text: 'b' });
    const c = await startCase(svc, slow.workflowId, { text: 'c' });
    expect((await caseStatus(svc, b)).status).toBe('RUNNING');
    expect((await caseStatus(svc, c)).status).toBe('QUEUED');

    await answered(
      svc.client.POST('/api/v1/tasks/{taskId}/complete', {
        params: { path: { taskId: String(taskId) } },
        body: { outputs: { approved: true, note: 'go' } },
      }),
      200,
    );
    const [endA, endB, endC] = await Promise.all([a, b, c].map((id) => waitForEnd(svc, id, 120_000)));
    expect([endA, endB, endC].map((e) => e?.status)).toEqual(['COMPLETED', 'COMPLETED', 'COMPLETED']);
    // The decided case ran on beside b (above the cap of 1); c waited until both had ended.
    const startedC = Date.parse(String(endC?.startedAt));
    expect(startedC).toBeGreaterThanOrEqual(Date.parse(String(endA?.finishedAt)));
    expect(startedC).toBeGreaterThanOrEqual(Date.parse(String(endB?.finishedAt)));
  }, 120_000);

  it('a schedule firing over the cap queues its case (outcome queued); the case runs when the slot frees', async () => {
    await setCap(svc.organizationId, 1);
    const wf = await createWorkflow(svc, sleeper(3), 'scheduled under a cap');
    const blocker = await startCase(svc, wf.workflowId, { text: 'holds the slot' });
    // A firing only when triggered: the cron's next time is a year away at most, never during the test.
    const schedule = await createSchedule(svc, wf.workflowId, { cron: '0 0 1 1 *', inputs: { text: 'fired' } });
    expect((await svc.request('POST', `/api/v1/schedules/${schedule.scheduleId}/trigger`)).status).toBe(202);

    const fired = await waitForSchedule(svc, schedule.scheduleId, (s) => s.recentFirings[0]?.caseStatus === 'QUEUED');
    const caseId = String(fired.recentFirings[0]?.caseId);
    expect((await caseStatus(svc, blocker)).status).toBe('RUNNING');
    // The firing workflow ended at once with outcome queued: it does not wait for (or own) the queued case.
    const temporal = svc.service.context.temporal.client;
    const actions = (await temporal.schedule.getHandle(temporalScheduleId(schedule.scheduleId)).describe()).info
      .recentActions;
    const firingRun = temporal.workflow.getHandle(String(actions[0]?.action.workflow.workflowId));
    expect(await firingRun.result()).toEqual({ firing: 'queued', caseId });

    const [endBlocker, endScheduled] = await Promise.all([blocker, caseId].map((id) => waitForEnd(svc, id, 120_000)));
    expect(endScheduled).toMatchObject({ status: 'COMPLETED', source: 'scheduled', scheduleId: schedule.scheduleId });
    expect(typeof endScheduled?.queuedAt).toBe('string');
    // It took the slot the blocker freed, not one beside it.
    expect(Date.parse(String(endScheduled?.startedAt))).toBeGreaterThanOrEqual(
      Date.parse(String(endBlocker?.finishedAt)),
    );
    const results = await svc.request('GET', `/api/v1/case/${caseId}/results`);
    expect(results.body).toMatchObject({ results: { text: { value: 'fired' } } });
    await svc.request('DELETE', `/api/v1/schedules/${schedule.scheduleId}`);
  }, 120_000);
});
