import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TestService } from '../support/harness.js';
import { startAdmissionService } from './admission-support.js';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres.js';
import { caseStatus, createWorkflow, execute, initiate, peakOverlap, waitForEnd } from './support.js';
import { sleeper } from '../support/graphs.js';

/**
 * On Postgres, with executes sent all at once: the organization's lock row makes concurrent
 * admissions take turns, so exactly the cap runs and the rest wait.
 */
let schema: PostgresSchema;
let svc: TestService;

beforeAll(async () => {
  schema = await createPostgresSchema();
  svc = await startAdmissionService({}, { databaseUrl: schema.url });
}, 120_000);
afterAll(async () => {
  await svc?.stop();
  await schema?.drop();
});

it('admits exactly the cap out of concurrent executes, the rest as slots free', async () => {
  const cap = await svc.admin('PUT', `/admin/organizations/${svc.organizationId}/concurrency`, {
    maxConcurrentCases: 2,
  });
  expect(cap.status, cap.text).toBe(200);
  const { workflowId } = await createWorkflow(svc, sleeper(2));
  const ids = await Promise.all([0, 1, 2, 3, 4, 5].map(() => initiate(svc, { workflowId })));
  const answers = await Promise.all(ids.map((id) => execute(svc, id, { inputs: { text: id } })));
  expect(answers.map((a) => a.status)).toEqual(Array(6).fill(202));
  const statuses = await Promise.all(ids.map(async (id) => (await caseStatus(svc, id)).status));
  expect(statuses.filter((s) => s === 'RUNNING')).toHaveLength(2);
  expect(statuses.filter((s) => s === 'QUEUED')).toHaveLength(4);
  const ends = await Promise.all(ids.map((id) => waitForEnd(svc, id, 120_000)));
  expect(ends.map((e) => e.status)).toEqual(Array(6).fill('COMPLETED'));
  expect(peakOverlap(ends.map((e) => ({ start: String(e.startedAt), end: String(e.finishedAt) })))).toBe(2);
}, 180_000);
