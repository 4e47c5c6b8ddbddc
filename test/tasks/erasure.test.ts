import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkflow, startCase, waitForEnd } from '../cases/support.js';
import { startTestService, type TestService } from '../support/harness.js';
import { approvalGraph } from './graphs.js';
import { taskOf } from './support.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.stop();
});

describe('erasing a case that waited on a person', () => {
  it('erases its tasks too: their instructions and the decision came from the case', { timeout: 60_000 }, async () => {
    const { graph } = approvalGraph({
      title: 'Approve {{ amount }} EUR',
      instructions: 'Pay {{ amount }} EUR to the supplier?',
      assignee: { type: 'workspace' },
    });
    const { workflowId } = await createWorkflow(svc, graph, 'erased approval');
    const caseId = await startCase(svc, workflowId, { amount: 4242 });
    const { taskId } = await taskOf(svc, caseId);
    const done = await svc.request('POST', `/api/v1/tasks/${taskId}/complete`, {
      body: { outputs: { approved: true, note: 'secret remark' } },
    });
    expect(done.status, done.text).toBe(200);
    expect((await waitForEnd(svc, caseId)).status).toBe('COMPLETED');

    expect((await svc.request('DELETE', `/api/v1/case/${caseId}`)).status).toBe(204);
    expect((await svc.request('GET', `/api/v1/tasks/${taskId}`)).status).toBe(404);
    const list = await svc.request('GET', `/api/v1/tasks?caseId=${caseId}`);
    expect(list.body.items).toEqual([]);
    const { db } = svc.service.context.store;
    expect(await db.selectFrom('human_task_events').select('id').where('task_id', '=', taskId).execute()).toEqual([]);
  });
});
