import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFor } from '../support/keys.js';
import { answered, startTestService, type TestService } from '../support/harness.js';
import { createWorkflow, startCase, waitForEnd } from './support.js';
import { Graph, py } from '../support/graphs.js';

/**
 * The API key that started a bulk rerun is revoked while the batch runs: as docs/cases.md says, the key is
 * checked again before each step, so the batch starts no more cases and ends FAILED with the reason.
 * One rerun a second keeps the batch running long enough to revoke the key between two steps.
 */
let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ config: { cases: { rerunBatchPerSecond: 1 } } });
});
afterAll(async () => {
  await svc?.stop();
});

async function progress(batchId: string) {
  return answered(svc.client.GET('/api/v1/case/rerun/{batchId}', { params: { path: { batchId } } }), 200);
}

async function caseCount(workflowId: string): Promise<number> {
  const r = await answered(svc.client.GET('/api/v1/case', { params: { query: { workflowId, limit: 100 } } }), 200);
  return r.cases.length;
}

describe('bulk rerun whose key is revoked mid-batch', () => {
  it('starts no more reruns after the revocation and ends FAILED naming the key', { timeout: 120_000 }, async () => {
    const g = new Graph();
    const n = [{ name: 'n', type: 'int' as const }];
    const input = g.input(n);
    const failing = g.python('Fails', py('raise ValueError("always")'), n, n);
    const output = g.output(n);
    g.edge(input, failing);
    g.edge(failing, output);
    const { workflowId } = await createWorkflow(svc, g, 'revoked bulk');
    const originals = await Promise.all([1, 2, 3, 4, 5, 6].map((i) => startCase(svc, workflowId, { n: i })));
    for (const id of originals) expect((await waitForEnd(svc, id)).status).toBe('FAILED');

    const user = await svc.admin('POST', '/admin/users', {
      email: `bulk-${crypto.randomUUID()}@example.com`,
      name: 'Bulk rerunner',
      organizationId: svc.organizationId,
    });
    expect(user.status, user.text).toBe(201);
    const created = await svc.admin('POST', '/admin/keys', {
      organizationId: svc.organizationId,
      userId: user.body.id,
      name: 'bulk rerun key',
      grants: ['case:full', 'workflow:full'],
    });
    expect(created.status, created.text).toBe(201);
    const key = String(created.body.key);
    const keyId = (created.body.apiKey as { id: string }).id;

    const batch = await answered(
      clientFor(svc, key).POST('/api/v1/case/rerun', {
        body: { filter: { workflowId, status: 'FAILED' }, from: 'start' },
      }),
      202,
    );
    expect(batch.matched).toBe(6);
    const { batchId } = batch;
    for (const until = Date.now() + 30_000; (await progress(batchId)).started < 1;) {
      expect(Date.now()).toBeLessThan(until);
      await new Promise((r) => setTimeout(r, 50));
    }
    const revoked = await svc.admin('POST', `/admin/keys/${keyId}/revoke`);
    expect(revoked.status, revoked.text).toBeLessThan(300);
    const startedWhenRevoked = (await progress(batchId)).started;

    let ended = await progress(batchId);
    for (const until = Date.now() + 30_000; ended.status === 'RUNNING' && Date.now() < until;) {
      await new Promise((r) => setTimeout(r, 200));
      ended = await progress(batchId);
    }
    expect(ended).toMatchObject({ status: 'FAILED', matched: 6, failed: 0 });
    expect(String(ended.error)).toContain('The key that started the batch can no longer be used');
    // At most the step already under way when the key was revoked (one case a step) finished after it.
    expect(ended.started).toBeLessThanOrEqual(startedWhenRevoked + 1);
    expect(ended.started).toBeLessThan(6);
    // Nothing starts later either: the cases of the workflow are the originals and the reruns recorded.
    await new Promise((r) => setTimeout(r, 3000));
    expect(await caseCount(workflowId)).toBe(6 + ended.started);
    expect((await progress(batchId)).started).toBe(ended.started);
  });
});
