import { afterAll, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.js';
import { exited, WorkerProcesses } from '../support/worker-process.js';
import { caseStatus, createWorkflow, startCase, waitForEnd } from './support.js';
import { sleeper } from '../support/graphs.js';

/**
 * A cap across a killed worker (SIGKILL mid-case) and a restarted API: the queue lives in the store,
 * so the queued case is neither lost nor started early, and the slot of the case whose worker died
 * is freed once its run ends on the next worker.
 */
let first: TestService | undefined;
let second: TestService | undefined;
const workers = new WorkerProcesses(() => {
  if (!first) throw new Error('no service');
  return first;
});

afterAll(async () => {
  await workers.stopAll();
  await second?.stop();
  await first?.stop();
});

it('keeps the queue over a kill -9 and a restart; the queued case starts after the restart', async () => {
  first = await startTestService({ role: 'api' });
  const cap = await first.admin('PUT', `/admin/organizations/${first.organizationId}/concurrency`, {
    maxConcurrentCases: 1,
  });
  expect(cap.status, cap.text).toBe(200);
  const worker = workers.start();
  const wf = await createWorkflow(first, sleeper(3));
  const running = await startCase(first, wf.workflowId, { text: 'running' });
  const queued = await startCase(first, wf.workflowId, { text: 'queued' });
  expect((await caseStatus(first, queued)).status).toBe('QUEUED');
  // The first case's run has started on the worker process: kill it there, then stop the API.
  const until = Date.now() + 60_000;
  while ((await caseStatus(first, running)).currentNode === null) {
    if (Date.now() > until) throw new Error('the first case never started its node');
    await new Promise((r) => setTimeout(r, 100));
  }
  worker.kill('SIGKILL');
  await exited(worker);
  const key = first.key;
  await first.stop({ keepData: true });

  second = await startTestService({ dataDir: first.dataDir, taskQueue: first.taskQueue, key });
  expect((await caseStatus(second, queued)).status).toBe('QUEUED');
  const endRunning = await waitForEnd(second, running, 120_000);
  const endQueued = await waitForEnd(second, queued, 120_000);
  // The killed node's attempt may fail the first case (its Python call died with the worker): it ends either way.
  expect(['COMPLETED', 'FAILED']).toContain(endRunning.status);
  expect(endQueued.status).toBe('COMPLETED');
  // The slot went to the queued case only once the first case's run had ended.
  expect(Date.parse(String(endQueued.startedAt))).toBeGreaterThanOrEqual(Date.parse(String(endRunning.finishedAt)));
}, 240_000);
