import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../support/harness.js';
import { caseStatus, createWorkflow, peakOverlap, startCase, waitForEnd } from './support.js';
import { fairShare, sleepingOrganization, startAdmissionService } from './admission-support.js';
import { sleeper } from '../support/graphs.js';
import { planOf, recordStatements } from '../support/statements.js';

/**
 * The fair share under contention through the real service (docs/concurrency.md#fair-share): a run
 * budget of 2 split over the active organizations, floor 1. Organization A alone is not limited; while
 * organization B is active (it started a case within the window), A runs one case at a time and the
 * rest of its cases wait their turn, FIFO, while B's case runs at once; the operator's own setting for
 * A replaces the share. The share engages here whatever the load (saturation 0, "always", as an operator
 * sets it in split roles); fair-share-saturation.test.ts tests the gate.
 */
let svc: TestService;
let organizationB: Awaited<ReturnType<typeof sleepingOrganization>>;

beforeAll(async () => {
  svc = await startAdmissionService({ fairShare: fairShare(2, 1, 0) });
  organizationB = await sleepingOrganization(svc, 1);
});
afterAll(async () => {
  await svc?.stop();
});

/** One case of organization B, executed; its status as execute answered. */
const caseOfB = () => organizationB.start('b');

async function threeCasesOfA(workflowId: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push(await startCase(svc, workflowId, { text: `a${i}` }));
  return ids;
}

const statusesOf = (ids: string[]) => Promise.all(ids.map(async (id) => (await caseStatus(svc, id)).status));

describe('fair share under contention', () => {
  it('alone, an organization is not limited', async () => {
    const wf = await createWorkflow(svc, sleeper(2));
    const ids = await threeCasesOfA(wf.workflowId);
    expect(await statusesOf(ids)).toEqual(['RUNNING', 'RUNNING', 'RUNNING']);
    const ends = await Promise.all(ids.map((id) => waitForEnd(svc, id, 60_000)));
    expect(ends.map((e) => e.status)).toEqual(['COMPLETED', 'COMPLETED', 'COMPLETED']);
  }, 120_000);

  it('while another organization is active, it runs within its share and the rest wait FIFO', async () => {
    const wf = await createWorkflow(svc, sleeper(2));
    const b = await caseOfB();
    // B's share (1 of a budget of 2 over two organizations) is free: its case runs at once.
    expect(b.status).toBe('RUNNING');
    const ids = await threeCasesOfA(wf.workflowId);
    expect(await statusesOf(ids)).toEqual(['RUNNING', 'QUEUED', 'QUEUED']);
    const usage = await svc.admin('GET', `/admin/organizations/${svc.organizationId}/concurrency`);
    expect(usage.body).toMatchObject({ maxConcurrentCases: null, source: 'default', queued: 2 });

    const ends = await Promise.all(ids.map((id) => waitForEnd(svc, id, 90_000)));
    expect(ends.map((e) => e.status)).toEqual(['COMPLETED', 'COMPLETED', 'COMPLETED']);
    // One at a time, in the order they came.
    expect(peakOverlap(ends.map((e) => ({ start: String(e.startedAt), end: String(e.finishedAt) })))).toBe(1);
    const starts = ends.map((e) => Date.parse(String(e.startedAt)));
    expect([...starts].sort((x, y) => x - y)).toEqual(starts);
    expect((await organizationB.end(b.caseId)).status).toBe('COMPLETED');
  }, 180_000);

  it("the operator's own setting for the organization replaces its share", async () => {
    const own = await svc.admin('PUT', `/admin/organizations/${svc.organizationId}/concurrency`, {
      maxConcurrentCases: null,
    });
    expect(own.status, own.text).toBe(200);
    const wf = await createWorkflow(svc, sleeper(1));
    expect((await caseOfB()).status).toBe('RUNNING');
    const ids = await threeCasesOfA(wf.workflowId);
    expect(await statusesOf(ids)).toEqual(['RUNNING', 'RUNNING', 'RUNNING']);
    await Promise.all(ids.map((id) => waitForEnd(svc, id, 60_000)));
  }, 120_000);

  it("each execute's question (is another organization active?) reads indexes, not every case ever run", async () => {
    const { db } = svc.service.context.store;
    const statements = await recordStatements(db);
    await caseOfB();
    const asked = statements.take().filter((sql) => sql.includes('count(distinct'));
    expect(asked.length).toBeGreaterThanOrEqual(1);
    for (const sql of asked) {
      const plan = await planOf(db, sql);
      expect(
        plan.filter((line) => /^SCAN cases\b/.test(line)),
        plan.join('\n'),
      ).toEqual([]);
    }
  });
});
