import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.js';
import { createWorkflow, startCase, waitForEnd } from '../cases/support.js';
import { Graph } from '../support/graphs.js';
import { sendSteps, walkthrough } from './walkthrough.js';

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService();
}, 120_000);
afterAll(async () => {
  await svc?.stop();
});

it('runs the walk-through of docs/retention.md as written', async () => {
  const steps = walkthrough('retention.md');
  expect(steps.map((s) => `${s.method} ${s.path}`)).toEqual([
    'PUT /admin/organizations/{organizationId}/retention',
    'GET /admin/organizations/{organizationId}/retention',
    'DELETE /api/v1/case/{caseId}',
    'GET /api/v1/case/{caseId}/status',
  ]);
  const g = new Graph();
  const input = g.input([{ name: 'text' }]);
  const output = g.output([{ name: 'text' }]);
  g.edge(input, output);
  const caseId = await startCase(svc, (await createWorkflow(svc, g, 'echo')).workflowId, { text: 'x' });
  await waitForEnd(svc, caseId);
  const values = { organizationId: svc.organizationId, caseId };

  const answers = await sendSteps(svc, steps, values);
  expect(answers.map((a) => a.status)).toEqual([200, 200, 204, 404]);
  expect(answers[1]?.body).toMatchObject({ keepDays: 90, keepFailedDays: 365, source: 'organization' });
});
