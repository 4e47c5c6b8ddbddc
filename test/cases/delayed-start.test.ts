import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.js';
import { createWorkflow, execute, initiate, waitForEnd } from './support.js';
import { py, textChain } from '../support/graphs.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ config: { cases: { maxStartDelayMs: 3_600_000 } } });
});
afterAll(async () => {
  await svc?.stop();
});

const echo = () => textChain('Echo', py('return {"text": "later:" + inputs["text"]}'));
const inSeconds = (s: number) => new Date(Date.now() + s * 1000).toISOString();

describe('delayed start (startAt)', () => {
  it('runs the case at startAt, not before, and shows when it will start', async () => {
    const wf = await createWorkflow(svc, echo());
    const caseId = await initiate(svc, { workflowId: wf.workflowId });
    const startAt = inSeconds(3);
    const r = await execute(svc, caseId, { inputs: { text: 'x' }, startAt });
    expect(r.status, r.text).toBe(202);
    expect(r.body.startAt).toBe(startAt);
    const waiting = await svc.request('GET', `/api/v1/case/${caseId}/status`);
    expect(waiting.body).toMatchObject({ status: 'RUNNING', startAt, runningNodes: [] });
    const end = await waitForEnd(svc, caseId);
    expect(end.status).toBe('COMPLETED');
    // Nothing ran before startAt.
    expect(Date.parse(String(end.finishedAt))).toBeGreaterThanOrEqual(Date.parse(startAt));
    const results = await svc.request('GET', `/api/v1/case/${caseId}/results`);
    expect(results.body).toMatchObject({ results: { text: { value: 'later:x' } } });
  });

  it('cancels a case before its start: it ends CANCELLED and never runs', async () => {
    const wf = await createWorkflow(svc, echo());
    const caseId = await initiate(svc, { workflowId: wf.workflowId });
    expect((await execute(svc, caseId, { inputs: { text: 'x' }, startAt: inSeconds(600) })).status).toBe(202);
    const started = Date.now();
    const cancelled = await svc.request('POST', `/api/v1/case/${caseId}/cancel`);
    expect(cancelled.status, cancelled.text).toBe(200);
    expect((await waitForEnd(svc, caseId, 15_000)).status).toBe('CANCELLED');
    expect(Date.now() - started).toBeLessThan(15_000);
    const audit = await svc.request('GET', `/api/v1/case/${caseId}/audit`);
    expect(audit.body.executed_nodes).toEqual([]);
  });

  it('refuses a startAt in the past or beyond cases.maxStartDelayMs (400 naming it), changing nothing', async () => {
    const wf = await createWorkflow(svc, echo());
    const caseId = await initiate(svc, { workflowId: wf.workflowId });
    for (const startAt of [inSeconds(-5), inSeconds(7200), 'tomorrow']) {
      const r = await execute(svc, caseId, { inputs: { text: 'x' }, startAt });
      expect(r.status, r.text).toBe(400);
      expect((r.body.metadata as { fields: Array<{ field: string }> }).fields[0]?.field).toBe('body.startAt');
    }
    const status = await svc.request('GET', `/api/v1/case/${caseId}/status`);
    expect(status.body).toMatchObject({ status: 'PENDING', startAt: null });
  });
});
