import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.js';
import { createWorkflow, initiate, waitForEnd } from '../cases/support.js';
import { sleeper } from '../support/graphs.js';
import { sendSteps, walkthrough } from './walkthrough.js';

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService();
}, 120_000);
afterAll(async () => {
  await svc?.stop();
});

it('runs the walk-through of docs/concurrency.md as written', async () => {
  const steps = walkthrough('concurrency.md');
  expect(steps.map((s) => `${s.method} ${s.path}`)).toEqual([
    'PUT /admin/organizations/{organizationId}/concurrency',
    'POST /api/v1/case/{firstCaseId}/execute',
    'POST /api/v1/case/{caseId}/execute',
    'GET /api/v1/case/{caseId}/status',
    'GET /admin/organizations/{organizationId}/concurrency',
    'POST /api/v1/case/{caseId}/cancel',
  ]);
  const { workflowId } = await createWorkflow(svc, sleeper(2), 'slow');
  const values = {
    organizationId: svc.organizationId,
    firstCaseId: await initiate(svc, { workflowId }),
    caseId: await initiate(svc, { workflowId }),
  };

  const answers = await sendSteps(svc, steps, values);
  expect(answers.map((a) => a.status)).toEqual([200, 202, 202, 200, 200, 200]);
  expect(answers[3]?.body).toMatchObject({ status: 'QUEUED', startedAt: null });
  expect(typeof answers[3]?.body.queuedAt).toBe('string');
  expect(answers[4]?.body).toMatchObject({ running: 1, queued: 1 });
  expect(answers[5]?.body.status).toBe('CANCELLED');
  expect((await waitForEnd(svc, values.firstCaseId, 60_000)).status).toBe('COMPLETED');
}, 120_000);
