import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CaseStatus } from '../../src/domain/cases.js';
import { CaseRepo } from '../../src/store/case-repo.js';
import { searchAttributes } from '../../src/temporal/contracts/search-attributes.js';
import type { CaseflowClient } from '../../src/client/index.js';
import { clientFor, newCaller, newKey, newWorkspace } from '../support/keys.js';
import { answered, refused, startTestService, type TestService } from '../support/harness.js';
import { caseStatus, createWorkflow, startCase, waitForEnd } from './support.js';
import { Graph, py } from '../support/graphs.js';

let svc: TestService;
/** Another organization's client. */
let otherOrg: CaseflowClient;
beforeAll(async () => {
  svc = await startTestService({ config: { cases: { rerunBatchPerSecond: 100, rerunBatchMaxCases: 250 } } });
  otherOrg = clientFor(svc, (await newCaller(svc, ['case:full', 'workflow:full'])).key);
});
afterAll(async () => {
  await svc?.stop();
});

const buggy = py('if inputs["n"] > 10:\n    raise ValueError("too big")\nreturn {"n": inputs["n"] + 1}');
const fixed = py('return {"n": inputs["n"] + 1}');

/** input(n) → Check (Python) → output(n); Check fails over 10 until fixed. */
function checked(source: string): Graph {
  const g = new Graph();
  const n = [{ name: 'n', type: 'int' as const }];
  const input = g.input(n);
  const check = g.python('Check', source, n, n);
  const output = g.output(n);
  g.edge(input, check);
  g.edge(check, output);
  return g;
}

/** Starts `count` cases, a few at a time, and waits for their ends. */
async function cases(workflowId: string, inputs: number[]): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < inputs.length; i += 20) {
    const chunk = await Promise.all(inputs.slice(i, i + 20).map((n) => startCase(svc, workflowId, { n })));
    for (const id of chunk) await waitForEnd(svc, id);
    ids.push(...chunk);
  }
  return ids;
}

/**
 * `count` more FAILED cases recorded exactly as the engine recorded `caseId`'s end (row and node audit), without
 * running them: a fixture of many failed cases that keeps the test to the reruns' own runs.
 */
async function copiesOfFailed(caseId: string, count: number): Promise<void> {
  const repo = new CaseRepo(svc.service.context.store.db);
  const original = await repo.find(caseId);
  if (!original?.error) throw new Error(`case ${caseId} did not fail`);
  const nodes = await repo.listNodes(caseId, (id) => id);
  const progress = {
    caseId,
    status: 'FAILED' as const,
    nodes: Object.fromEntries(nodes.map((n) => [n.nodeId, n])),
    executed: nodes.filter((n) => n.status === 'completed' || n.status === 'failed').map((n) => n.nodeId),
    failed: nodes.filter((n) => n.status === 'failed').map((n) => n.nodeId),
    running: [],
    remaining: [],
    results: {},
    error: original.error,
  };
  for (let i = 0; i < count; i++) {
    const copy = await repo.create({
      ...original,
      title: undefined,
      description: undefined,
      refUserId: undefined,
      webAppId: undefined,
      workspaces: undefined,
      rerunOf: undefined,
      rerunFrom: undefined,
      hookId: undefined,
      scheduleId: undefined,
      id: undefined,
    });
    await repo.markRunning(copy.id, {
      inputs: original.inputs ?? {},
      deadlineMs: 60_000,
      temporalWorkflowId: `case-${copy.id}`,
    });
    await repo.finalize({
      caseId: copy.id,
      status: 'FAILED',
      runId: `fixture-${i}`,
      progress: { ...progress, caseId: copy.id },
    });
  }
}

async function batchUntilEnded(batchId: string, timeoutMs = 90_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const r = await answered(svc.client.GET('/api/v1/case/rerun/{batchId}', { params: { path: { batchId } } }), 200);
    if (r.status !== 'RUNNING') return r;
    if (Date.now() > until) throw new Error(`batch ${batchId} still running: ${JSON.stringify(r)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** How many cases of the workflow are in `status` (walking the list's pages). */
async function countCases(workflowId: string, status?: CaseStatus): Promise<number> {
  let count = 0;
  let cursor: string | undefined;
  do {
    const page = await answered(
      svc.client.GET('/api/v1/case', {
        params: { query: { workflowId, limit: 100, ...(status ? { status } : {}), ...(cursor ? { cursor } : {}) } },
      }),
      200,
    );
    count += page.cases.length;
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return count;
}

describe('bulk rerun', () => {
  it(
    'reruns 200 failed cases on the fixed latest version: each once, all completing',
    { timeout: 240_000 },
    async () => {
      const g = checked(buggy);
      const { workflowId } = await createWorkflow(svc, g, 'bulk');
      const [first] = await cases(workflowId, [11]);
      await copiesOfFailed(String(first), 199);
      expect(await countCases(workflowId, 'FAILED')).toBe(200);
      const check = Object.values(g.nodes).find((node) => node.name === 'Check');
      if (!check) throw new Error('the buggy graph has no Check node');
      await answered(
        svc.client.PATCH('/api/v1/workflow/{workflowId}', {
          params: { path: { workflowId } },
          body: {
            nodes: { ...g.nodes, [check.id]: { ...check, process: { source: fixed } } },
            edges: g.edges,
            activeStatus: 'active',
          },
        }),
        200,
      );

      const created = await answered(
        svc.client.POST('/api/v1/case/rerun', {
          body: { filter: { workflowId, status: 'FAILED' }, from: 'failed', version: 'latest' },
        }),
        202,
      );
      expect(created).toMatchObject({ status: 'RUNNING', matched: 200, from: 'failed', version: 'latest' });
      expect(created.temporalWorkflowId).toBe(`case-rerun-${created.batchId}`);

      const { client } = svc.service.context.temporal;
      const described = await client.workflow.getHandle(created.temporalWorkflowId).describe();
      expect(described.typedSearchAttributes.get(searchAttributes.workflowId)).toBe(workflowId);
      expect(described.typedSearchAttributes.get(searchAttributes.organizationId)).toBe(svc.organizationId);

      const ended = await batchUntilEnded(created.batchId);
      expect(ended).toMatchObject({
        status: 'COMPLETED',
        matched: 200,
        started: 200,
        skipped: 0,
        failed: 0,
        pending: 0,
      });
      // Each original rerun exactly once: 200 originals and 200 reruns, the reruns all completing.
      const until = Date.now() + 60_000;
      while ((await countCases(workflowId, 'COMPLETED')) < 200 && Date.now() < until)
        await new Promise((resolve) => setTimeout(resolve, 250));
      expect(await countCases(workflowId, 'COMPLETED')).toBe(200);
      expect(await countCases(workflowId)).toBe(400);

      // The batch matched what existed at its creation: its own reruns are not matched again by a later batch.
      const again = await answered(
        svc.client.POST('/api/v1/case/rerun', {
          body: { filter: { workflowId, status: 'FAILED' }, from: 'failed', version: 'latest' },
        }),
        202,
      );
      expect(again.matched).toBe(200);
      const cancel = () =>
        svc.client.POST('/api/v1/case/rerun/{batchId}/cancel', { params: { path: { batchId: again.batchId } } });
      expect((await answered(cancel(), 200)).status).toBe('CANCELLED');
      const stopped = await batchUntilEnded(again.batchId);
      const gone = stopped.started + stopped.skipped + stopped.failed;
      expect(gone).toBeLessThan(200);
      await refused(cancel(), 409);

      // A filter over more than cases.rerunBatchMaxCases is refused, and starts nothing.
      const wide = await refused(
        svc.client.POST('/api/v1/case/rerun', { body: { filter: { workflowId }, from: 'start' } }),
        400,
      );
      expect(wide.message).toContain('at most 250');
    },
  );

  it('skips the cases a rerun refuses, with the reason', async () => {
    const { workflowId } = await createWorkflow(svc, checked(buggy), 'bulk skips');
    const [completed] = await cases(workflowId, [1, 20, 30]);
    const created = await answered(
      svc.client.POST('/api/v1/case/rerun', { body: { filter: { workflowId }, from: 'failed' } }),
      202,
    );
    expect(created.matched).toBe(3);
    const ended = await batchUntilEnded(created.batchId);
    expect(ended).toMatchObject({ status: 'COMPLETED', started: 2, skipped: 1, failed: 0 });
    expect(ended.skippedCases).toEqual([{ caseId: completed, reason: expect.stringContaining('did not fail') }]);
    // The reruns are of the original version (still buggy): they fail again.
    expect((await caseStatus(svc, String(completed))).reruns).toEqual([]);
  });

  it('refuses bad bodies, and another organization neither sees nor reruns our cases', async () => {
    const { workflowId } = await createWorkflow(svc, checked(buggy), 'bulk tenants');
    const [failed] = await cases(workflowId, [50]);
    const bad = [
      { filter: { from: '2026-02-01T00:00:00Z', to: '2026-01-01T00:00:00Z' }, from: 'failed' },
      { filter: {}, from: 'middle' },
      { filter: { workflowId: 'not-a-uuid' }, from: 'start' },
    ];
    // Sent raw: the document itself forbids two of these (an unknown from, an id that is not a uuid).
    for (const body of bad) expect((await svc.request('POST', '/api/v1/case/rerun', { body })).status).toBe(400);

    const theirs = await answered(
      otherOrg.POST('/api/v1/case/rerun', { body: { filter: { workflowId }, from: 'start' } }),
      202,
    );
    expect(theirs.matched).toBe(0);

    const ours = await answered(
      svc.client.POST('/api/v1/case/rerun', { body: { filter: { workflowId }, from: 'failed' } }),
      202,
    );
    const onOurs = { params: { path: { batchId: ours.batchId } } };
    await refused(otherOrg.GET('/api/v1/case/rerun/{batchId}', onOurs), 404);
    await refused(otherOrg.POST('/api/v1/case/rerun/{batchId}/cancel', onOurs), 404);
    // Only our batch reran the case.
    expect((await batchUntilEnded(ours.batchId)).started).toBe(1);
    expect((await caseStatus(svc, String(failed))).reruns).toHaveLength(1);
    // A key of this organization scoped to another workspace neither matches our cases nor sees our batch.
    const nextDoor = clientFor(
      svc,
      (await newKey(svc, ['case:full'], { workspaceIds: [await newWorkspace(svc)] })).key,
    );
    const scoped = await answered(
      nextDoor.POST('/api/v1/case/rerun', { body: { filter: { workflowId }, from: 'start' } }),
      202,
    );
    expect(scoped.matched).toBe(0);
    await refused(nextDoor.GET('/api/v1/case/rerun/{batchId}', onOurs), 404);
  });
});
