import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.js';
import { caseStatus, createWorkflow, startCase, waitForEnd } from './support.js';
import { sleeper } from '../support/graphs.js';

/**
 * A case's end hands its slot to the organization's next queued case itself: the periodic admission
 * pass is off here (an hour apart), so only the end's own check (read with its final write) can start it.
 */
let svc: TestService;

beforeAll(async () => {
  svc = await startTestService({
    config: { cases: { maxConcurrentPerOrganization: 1, admissionIntervalMs: 3_600_000 } },
  });
});
afterAll(async () => {
  await svc?.stop();
});

it("a case's end starts the queued case that waited for its slot, without the periodic pass", async () => {
  const wf = await createWorkflow(svc, sleeper(1));
  const first = await startCase(svc, wf.workflowId, { text: 'first' });
  const second = await startCase(svc, wf.workflowId, { text: 'second' });
  expect((await caseStatus(svc, second)).status).toBe('QUEUED');
  const firstEnd = await waitForEnd(svc, first, 60_000);
  const secondEnd = await waitForEnd(svc, second, 60_000);
  expect([firstEnd.status, secondEnd.status]).toEqual(['COMPLETED', 'COMPLETED']);
  expect(Date.parse(String(secondEnd.startedAt))).toBeGreaterThanOrEqual(Date.parse(String(firstEnd.finishedAt)));
});
