import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.js';
import { createWorkflow, py, textChain } from '../cases/support.js';
import { createSchedule, ended, waitForSchedule } from './support.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ config: { schedules: { minIntervalSeconds: 1 } } });
});
afterAll(async () => {
  await svc?.stop();
});

const echo = () => textChain('Echo', py('return {"text": "echo:" + inputs["text"]}'));

describe('a schedule firing', () => {
  it('creates and runs a case per firing, with source scheduled and the schedule id', async () => {
    const wf = await createWorkflow(svc, echo());
    const created = await createSchedule(svc, wf.workflowId, { intervalSeconds: 2, inputs: { text: 'tick' } });
    expect(created.inEngine).toBe(true);
    expect(created.nextRunTimes.length).toBeGreaterThan(0);
    const s = await waitForSchedule(svc, created.scheduleId, (x) => x.recentFirings.some(ended));
    const firing = s.recentFirings.find(ended);
    expect(firing).toMatchObject({ status: 'started', caseStatus: 'COMPLETED' });
    const status = await svc.request('GET', `/api/v1/case/${firing?.caseId}/status`);
    expect(status.body).toMatchObject({ source: 'scheduled', scheduleId: created.scheduleId, status: 'COMPLETED' });
    const results = await svc.request('GET', `/api/v1/case/${firing?.caseId}/results`);
    expect(results.body).toMatchObject({ results: { text: { value: 'echo:tick' } } });
    expect((await svc.request('DELETE', `/api/v1/schedules/${created.scheduleId}`)).status).toBe(204);
    expect((await svc.request('GET', `/api/v1/schedules/${created.scheduleId}`)).status).toBe(404);
  });
});
