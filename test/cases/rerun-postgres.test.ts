import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answered, startTestService, type TestService } from '../support/harness.js';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres.js';
import { audit, caseStatus, createWorkflow, startCase, waitForEnd } from './support.js';
import { Graph, py } from '../support/graphs.js';

/** input(n) → Double → Check (raises over 10) → output(n). */
function doubleThenCheck(): { graph: Graph; double: string } {
  const g = new Graph();
  const n = [{ name: 'n', type: 'int' as const }];
  const input = g.input(n);
  const double = g.python('Double', py('return {"n": inputs["n"] * 2}'), n, n);
  const check = g.python(
    'Check',
    py('if inputs["n"] > 10:\n    raise ValueError("too big")\nreturn {"n": inputs["n"]}'),
    n,
    n,
  );
  const output = g.output(n);
  g.edge(input, double);
  g.edge(double, check);
  g.edge(check, output);
  return { graph: g, double };
}

/**
 * On Postgres: a rerun reuses the recorded node, and a bulk rerun goes on where it was after the service that ran it
 * stopped mid-batch, rerunning each case once.
 */
describe('rerun on Postgres, across a restart', () => {
  let schema: PostgresSchema;
  let svc: TestService;
  beforeAll(async () => {
    schema = await createPostgresSchema();
    svc = await startTestService({ databaseUrl: schema.url, config: { cases: { rerunBatchPerSecond: 1 } } });
  });
  afterAll(async () => {
    await svc?.stop();
    await schema?.drop();
  });

  it('reruns from the failed node, and a batch survives a restart of the service', { timeout: 180_000 }, async () => {
    const { graph, double } = doubleThenCheck();
    const { workflowId } = await createWorkflow(svc, graph, 'rerun pg');
    const failed: string[] = [];
    for (const n of [6, 7, 8, 9]) failed.push(await startCase(svc, workflowId, { n }));
    for (const id of failed) expect((await waitForEnd(svc, id)).status).toBe('FAILED');

    const one = await answered(
      svc.client.POST('/api/v1/case/{caseId}/rerun', {
        params: { path: { caseId: String(failed[0]) } },
        body: { from: 'failed' },
      }),
      201,
    );
    await waitForEnd(svc, one.caseId);
    const reused = (await audit(svc, one.caseId)).audit.nodes_execution_data[double];
    expect(reused).toMatchObject({ outputs: { n: 12 }, reused: { case_id: failed[0], node_id: double } });

    // One case a second: stop the service once the first has been rerun, start another on the same store and queue.
    const batch = await answered(
      svc.client.POST('/api/v1/case/rerun', { body: { filter: { workflowId, status: 'FAILED' }, from: 'failed' } }),
      202,
    );
    expect(batch.matched).toBe(5);
    const progress = () =>
      answered(svc.client.GET('/api/v1/case/rerun/{batchId}', { params: { path: { batchId: batch.batchId } } }), 200);
    for (let started = 0; started < 1;) {
      await new Promise((r) => setTimeout(r, 100));
      started = (await progress()).started;
    }
    // The store's key: a restart on existing data bootstraps none.
    const { dataDir, taskQueue, key } = svc;
    await svc.stop({ keepData: true });
    svc = await startTestService({
      databaseUrl: schema.url,
      dataDir,
      taskQueue,
      key,
      config: { cases: { rerunBatchPerSecond: 1 } },
    });

    let ended = await progress();
    for (const until = Date.now() + 90_000; ended.status === 'RUNNING' && Date.now() < until;) {
      await new Promise((r) => setTimeout(r, 250));
      ended = await progress();
    }
    expect(ended).toMatchObject({ status: 'COMPLETED', matched: 5, started: 5, skipped: 0, failed: 0 });
    // Each original once in the batch: the first failed case has its single rerun plus the batch's.
    for (const id of failed) {
      expect((await caseStatus(svc, id)).reruns).toHaveLength(id === failed[0] ? 2 : 1);
    }
  });
});
