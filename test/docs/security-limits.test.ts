import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.js';
import { createWorkflow } from '../cases/support.js';
import { Graph } from '../support/graphs.js';
import { sendSteps, walkthrough } from './walkthrough.js';

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService({ config: { schedules: { minIntervalSeconds: 300, maxPerWorkspace: 1 } } });
}, 120_000);
afterAll(async () => {
  await svc?.stop();
});

it('runs the walk-through of docs/security.md (count limits, cron floods) as written', async () => {
  const steps = walkthrough('security.md', 'Count limits, later starts and cron floods');
  expect(steps.map((s) => `${s.method} ${s.path}`)).toEqual(
    Array(3).fill('POST /api/v1/workflow/{workflowId}/schedules'),
  );
  const g = new Graph();
  g.edge(g.input([{ name: 'text' }]), g.output([{ name: 'text' }]));
  const { workflowId } = await createWorkflow(svc, g, 'limits walk-through');

  const answers = await sendSteps(svc, steps, { workflowId });
  expect(answers.map((a) => a.status)).toEqual([400, 201, 409]);
  expect(answers[0]?.body).toMatchObject({
    message: JSON.parse(steps[0]?.expected ?? '{}').message as string,
    metadata: { fields: [{ field: 'body.cron' }] },
  });
  expect(answers[2]?.body).toMatchObject({
    errorCode: 'CONFLICT',
    message: `Workspace ${svc.workspaceId} holds 1 schedules, the most it may (schedules.maxPerWorkspace): delete one first`,
    metadata: { limit: { setting: 'schedules.maxPerWorkspace', max: 1 } },
  });
}, 120_000);
