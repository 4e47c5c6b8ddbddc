import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answered, startTestService, type TestService } from '../support/harness.js';
import { audit, caseStatus, createWorkflow, execute, initiate, results, waitForEnd } from './support.js';
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
    const r = await answered(
      svc.client.POST('/api/v1/case/{caseId}/execute', {
        params: { path: { caseId } },
        body: { inputs: { text: 'x' }, startAt },
      }),
      202,
    );
    expect(r.startAt).toBe(startAt);
    expect(await caseStatus(svc, caseId)).toMatchObject({ status: 'RUNNING', startAt, runningNodes: [] });
    const end = await waitForEnd(svc, caseId);
    expect(end.status).toBe('COMPLETED');
    // Nothing ran before startAt.
    expect(Date.parse(String(end.finishedAt))).toBeGreaterThanOrEqual(Date.parse(startAt));
    expect(await results(svc, caseId)).toMatchObject({ text: { value: 'later:x' } });
  });

  it('cancels a case before its start: it ends CANCELLED and never runs', async () => {
    const wf = await createWorkflow(svc, echo());
    const caseId = await initiate(svc, { workflowId: wf.workflowId });
    expect((await execute(svc, caseId, { inputs: { text: 'x' }, startAt: inSeconds(600) })).status).toBe(202);
    await answered(svc.client.POST('/api/v1/case/{caseId}/cancel', { params: { path: { caseId } } }), 200);
    // Ended by the cancel, long before its start 600 s away.
    expect((await waitForEnd(svc, caseId, 60_000)).status).toBe('CANCELLED');
    expect((await audit(svc, caseId)).executed_nodes).toEqual([]);
  });

  it('refuses a startAt in the past or beyond cases.maxStartDelayMs (400 naming it), changing nothing', async () => {
    const wf = await createWorkflow(svc, echo());
    const caseId = await initiate(svc, { workflowId: wf.workflowId });
    for (const startAt of [inSeconds(-5), inSeconds(7200), 'tomorrow']) {
      const r = await execute(svc, caseId, { inputs: { text: 'x' }, startAt });
      expect(r.status, r.text).toBe(400);
      expect((r.body.metadata as { fields: Array<{ field: string }> }).fields[0]?.field).toBe('body.startAt');
    }
    expect(await caseStatus(svc, caseId)).toMatchObject({ status: 'PENDING', startAt: null });
  });
});
