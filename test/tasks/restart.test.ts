import { describe, expect, it } from 'vitest';
import { createWorkflow, results, startCase, waitForEnd } from '../cases/support.js';
import { answered } from '../support/harness.js';
import { apiServiceWithWorkerProcesses } from '../support/worker-process.js';
import { approvalGraph } from './graphs.js';
import { completeTask, taskOf } from './support.js';

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
    const { taskId } = await taskOf(svc, caseId, { status: 'open' }, 60_000);

    await workers.crashAndReplace(first);
    const done = await answered(completeTask(svc, taskId, { approved: true, note: 'after the crash' }), 200);
    expect(done.status).toBe('completed');
    expect((await waitForEnd(svc, caseId, 60_000)).status).toBe('COMPLETED');
    expect(await results(svc, caseId)).toMatchObject({
      approved: { value: true },
      note: { value: 'after the crash' },
    });
    // Legitimately long under load, hence more than the default 60 s: two worker processes start (the built CLI: store,
    // Python pool, Temporal connection), and the task the completion signals waits out the dead worker's sticky
    // queue (the SDK's 10 s schedule-to-start) before the new worker gets it. Every wait above is on a condition.
  }, 180_000);
});
