import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { audit, createWorkflow, startCase, waitForEnd } from '../cases/support.js';
import { newCaller, newKey } from '../support/keys.js';
import { http, startTestService, type TestResponse, type TestService } from '../support/harness.js';
import { approvalGraph } from './graphs.js';
import { taskOf as openedTask } from './support.js';

let svc: TestService;
let workflowId: string;
let taskNodeId: string;
let keys: Record<'otherOrg' | 'member' | 'noCaseGrant', string>;
let memberId: string;

const process = {
  title: 'Approve {{ amount }} EUR',
  instructions: 'Pay {{ amount }} EUR to the supplier?',
  assignee: { type: 'role', role: 'member' },
  due: { after_ms: 24 * 3600_000 },
  on_due: { action: 'route', route_id: 'approved' },
};

beforeAll(async () => {
  svc = await startTestService();
  const { graph, task } = approvalGraph(process);
  taskNodeId = task;
  ({ workflowId } = await createWorkflow(svc, graph, 'approval'));
  const member = await newKey(svc, ['case:read']);
  memberId = member.userId;
  keys = {
    otherOrg: (await newCaller(svc, ['case:full', 'workflow:full'])).key,
    member: member.key,
    noCaseGrant: (await newKey(svc, ['workflow:full'])).key,
  };
});
afterAll(async () => {
  await svc?.stop();
});

const taskOf = (caseId: string) => openedTask(svc, caseId);

function post(taskId: string, action: string, body?: unknown, key?: string): Promise<TestResponse> {
  return svc.request('POST', `/api/v1/tasks/${taskId}/${action}`, { body: body ?? {}, ...(key ? { key } : {}) });
}

describe('task inbox', () => {
  it('refuses a graph naming an unknown assignee or a form without fields, each with 400 naming the field', async () => {
    const stranger = randomUUID();
    const { graph, task } = approvalGraph({ ...process, assignee: { type: 'user', user_id: stranger } });
    const refused = await svc.request('POST', '/api/v1/workflow', {
      headers: { 'x-workspace-id': svc.workspaceId },
      body: { name: 'bad', activeStatus: 'active', nodes: graph.nodes, edges: graph.edges },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.metadata).toMatchObject({
      fields: [{ field: `body.nodes.${task}.process.assignee.user_id`, message: expect.stringContaining(stranger) }],
    });
  });

  it('lists the waiting task, shows it on the case, takes one completion from the assignee and finishes the case', async () => {
    const caseId = await startCase(svc, workflowId, { amount: 120 });
    const summary = await taskOf(caseId);
    const taskId = String(summary.taskId);
    expect(summary).toMatchObject({ status: 'open', title: 'Approve 120 EUR', workflowId, nodeId: taskNodeId });

    const status = await svc.request('GET', `/api/v1/case/${caseId}/status`);
    expect(status.body.waitingTasks).toEqual([
      { taskId, nodeId: taskNodeId, title: 'Approve 120 EUR', dueAt: summary.dueAt },
    ]);
    expect((await audit(svc, caseId)).audit.nodes_execution_data[taskNodeId]?.status).toBe('waiting');
    const metrics = await http(`${svc.url}/metrics`, 'GET');
    expect(metrics.text).toMatch(/caseflow_human_tasks_open [1-9]/);
    expect(metrics.text).not.toContain(svc.workspaceId);

    const detail = await svc.request('GET', `/api/v1/tasks/${taskId}`, { key: keys.member });
    expect(detail.status, detail.text).toBe(200);
    expect(detail.body).toMatchObject({ instructions: 'Pay 120 EUR to the supplier?', outputs: null });
    expect((detail.body.history as Array<{ action: string }>).map((h) => h.action)).toEqual(['opened']);

    // Another organization sees nothing; a key without Case: Read may not look.
    expect((await svc.request('GET', `/api/v1/tasks/${taskId}`, { key: keys.otherOrg })).status).toBe(404);
    expect((await post(taskId, 'complete', { outputs: { approved: true } }, keys.otherOrg)).status).toBe(404);
    expect((await svc.request('GET', `/api/v1/tasks/${taskId}`, { key: keys.noCaseGrant })).status).toBe(403);
    const foreignList = await svc.request('GET', `/api/v1/tasks?caseId=${caseId}`, { key: keys.otherOrg });
    expect(foreignList.body.items).toEqual([]);

    const claimed = await post(taskId, 'claim', undefined, keys.member);
    expect(claimed.status, claimed.text).toBe(200);
    expect(claimed.body).toMatchObject({ status: 'claimed', claimedBy: memberId });
    expect((await post(taskId, 'claim')).status).toBe(409);
    const mine = await svc.request('GET', `/api/v1/tasks?assignee=me&status=claimed`, { key: keys.member });
    expect((mine.body.items as Array<{ taskId: string }>).map((t) => t.taskId)).toContain(taskId);

    const bad = await post(taskId, 'complete', { outputs: { approved: 'yes', extra: 1 } }, keys.member);
    expect(bad.status).toBe(400);
    expect((bad.body.metadata as { fields: Array<{ field: string }> }).fields.map((f) => f.field).sort()).toEqual([
      'body.outputs.approved',
      'body.outputs.extra',
    ]);
    expect((await svc.request('GET', `/api/v1/tasks/${taskId}`)).body.status).toBe('claimed');

    const done = await post(taskId, 'complete', { outputs: { approved: false, note: 'too much' } }, keys.member);
    expect(done.status, done.text).toBe(200);
    expect(done.body).toMatchObject({
      status: 'completed',
      outputs: { approved: false, note: 'too much' },
      decidedBy: memberId,
      decidedVia: 'api',
    });
    const history = done.body.history as Array<{ action: string; actorUserId: string | null }>;
    expect(history.map((h) => h.action)).toEqual(['opened', 'claimed', 'completed']);
    expect(history[2]?.actorUserId).toBe(memberId);

    const again = await post(taskId, 'complete', { outputs: { approved: true } });
    expect(again.status).toBe(409);
    expect((await waitForEnd(svc, caseId)).status).toBe('COMPLETED');
    const results = await svc.request('GET', `/api/v1/case/${caseId}/results`);
    expect(results.body.results).toMatchObject({ approved: { value: false }, note: { value: 'too much' } });
    const node = (await audit(svc, caseId)).audit.nodes_execution_data[taskNodeId];
    expect(node?.status).toBe('completed');
    expect(JSON.stringify(node?.logs)).toContain(`completed by user ${memberId} via api`);
    expect((await http(`${svc.url}/metrics`, 'GET')).text).toMatch(/caseflow_human_task_decision_seconds_count [1-9]/);
  });

  it('refuses decisions to a key that is neither Case: Full nor the assignee, and reassigns with Case: Full', async () => {
    const caseId = await startCase(svc, workflowId, { amount: 5 });
    const taskId = String((await taskOf(caseId)).taskId);
    const admins = { assignee: { type: 'role', role: 'admin' } };
    expect((await post(taskId, 'reassign', admins, keys.member)).status).toBe(403);
    const moved = await post(taskId, 'reassign', admins);
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body).toMatchObject({ status: 'open', assignee: admins.assignee });
    expect((await post(taskId, 'complete', { outputs: { approved: true } }, keys.member)).status).toBe(403);
    const unknown = await post(taskId, 'reassign', { assignee: { type: 'user', user_id: randomUUID() } });
    expect(unknown.status).toBe(400);
    expect((await post(taskId, 'complete', { outputs: { approved: true } })).status).toBe(200);
    expect((await waitForEnd(svc, caseId)).status).toBe('COMPLETED');
  });

  it('cancelling the case cancels its open task; lists page by cursor, soonest due first', async () => {
    const caseId = await startCase(svc, workflowId, { amount: 9 });
    const taskId = String((await taskOf(caseId)).taskId);
    const cancel = await svc.request('POST', `/api/v1/case/${caseId}/cancel`);
    expect(cancel.status, cancel.text).toBe(200);
    expect((await waitForEnd(svc, caseId)).status).toBe('CANCELLED');
    const task = await svc.request('GET', `/api/v1/tasks/${taskId}`);
    expect(task.body.status).toBe('cancelled');
    expect((await post(taskId, 'complete', { outputs: { approved: true } })).status).toBe(409);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: TestResponse = await svc.request(
        'GET',
        `/api/v1/tasks?sort=soonest_due&limit=1${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(page.status, page.text).toBe(200);
      seen.push(...(page.body.items as Array<{ dueAt: string }>).map((t) => t.dueAt));
      cursor = page.body.nextCursor as string | null;
    } while (cursor);
    expect(seen.length).toBeGreaterThanOrEqual(3);
    expect([...seen].sort()).toEqual(seen);
  });
});
