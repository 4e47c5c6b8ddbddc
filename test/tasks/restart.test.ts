import { describe, expect, it } from 'vitest';
import { createWorkflow, startCase, waitForEnd } from '../cases/support.js';
import { apiServiceWithWorkerProcesses } from '../support/worker-process.js';
import { approvalGraph } from './graphs.js';

/**
 * A case waiting on a person outlives its worker: the worker (the built CLI,
 * its own process) is killed with SIGKILL while the case waits, another one
 * starts, and the task is completed through the API-only service.
 */
const { service, workers } = apiServiceWithWorkerProcesses();

describe('a waiting case across a worker crash', () => {
  it('keeps its task completable after SIGKILL and finishes on the next worker', async () => {
    const svc = service();
    const { graph } = approvalGraph({ title: 'Approve {{ amount }}', assignee: { type: 'workspace' } });
    const { workflowId } = await createWorkflow(svc, graph, 'approval across a crash');
    const first = workers.start();
    const caseId = await startCase(svc, workflowId, { amount: 7 });
    let taskId: string | undefined;
    for (const until = Date.now() + 60_000; !taskId && Date.now() < until;) {
      const list = await svc.request('GET', `/api/v1/tasks?caseId=${caseId}&status=open`);
      taskId = (list.body.items as Array<{ taskId: string }>)[0]?.taskId;
      if (!taskId) await new Promise((r) => setTimeout(r, 100));
    }
    expect(taskId).toBeDefined();

    await workers.crashAndReplace(first);
    const done = await svc.request('POST', `/api/v1/tasks/${String(taskId)}/complete`, {
      body: { outputs: { approved: true, note: 'after the crash' } },
    });
    expect(done.status, done.text).toBe(200);
    expect(done.body.status).toBe('completed');
    expect((await waitForEnd(svc, caseId, 60_000)).status).toBe('COMPLETED');
    const results = await svc.request('GET', `/api/v1/case/${caseId}/results`);
    expect(results.body.results).toMatchObject({ approved: { value: true }, note: { value: 'after the crash' } });
  });
});
