import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { audit, caseStatus, createWorkflow, results, startCase, waitForEnd } from '../cases/support.js';
import { createClient, type CaseflowClient, type paths } from '../../src/client/index.js';
import { newCaller, newKey, newWorkspace } from '../support/keys.js';
import { answered, http, startTestService, type TestService } from '../support/harness.js';
import { approvalGraph } from './graphs.js';
import { completeTask, getTask, listTasks, taskOf } from './support.js';

let svc: TestService;
let workflowId: string;
let taskNodeId: string;
let as: Record<'otherOrg' | 'member' | 'noCaseGrant', CaseflowClient>;
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
  const client = (key: string) => createClient({ baseUrl: svc.url, key });
  as = {
    otherOrg: client((await newCaller(svc, ['case:full', 'workflow:full'])).key),
    member: client(member.key),
    noCaseGrant: client((await newKey(svc, ['workflow:full'])).key),
  };
});
afterAll(async () => {
  await svc?.stop();
});

type ReassignBody = paths['/api/v1/tasks/{taskId}/reassign']['post']['requestBody']['content']['application/json'];
const path = (taskId: string) => ({ params: { path: { taskId } } });
const claim = (taskId: string, client = svc.client) => client.POST('/api/v1/tasks/{taskId}/claim', path(taskId));
const release = (taskId: string, client = svc.client) => client.POST('/api/v1/tasks/{taskId}/release', path(taskId));
const reassign = (taskId: string, body: ReassignBody, client = svc.client) =>
  client.POST('/api/v1/tasks/{taskId}/reassign', { ...path(taskId), body });
const task = (taskId: string) => answered(getTask(svc, taskId), 200);
type StatsQuery = NonNullable<paths['/api/v1/stats/tasks']['get']['parameters']['query']>;
const taskStats = (client = svc.client, query: StatsQuery = {}) =>
  client.GET('/api/v1/stats/tasks', { params: { query } });

describe('task inbox', () => {
  it('refuses a graph naming an unknown assignee or a form without fields, each with 400 naming the field', async () => {
    const stranger = randomUUID();
    const { graph, task } = approvalGraph({ ...process, assignee: { type: 'user', user_id: stranger } });
    const refused = await svc.client.POST('/api/v1/workflow', {
      params: { header: { 'x-workspace-id': svc.workspaceId } },
      body: { name: 'bad', activeStatus: 'active', nodes: graph.nodes, edges: graph.edges },
    });
    expect(refused.response.status).toBe(400);
    expect(refused.error?.metadata).toMatchObject({
      fields: [{ field: `body.nodes.${task}.process.assignee.user_id`, message: expect.stringContaining(stranger) }],
    });
  });

  it('lists the waiting task, shows it on the case, takes one completion from the assignee and finishes the case', async () => {
    const caseId = await startCase(svc, workflowId, { amount: 120 });
    const summary = await taskOf(svc, caseId);
    const taskId = summary.taskId;
    expect(summary).toMatchObject({ status: 'open', title: 'Approve 120 EUR', workflowId, nodeId: taskNodeId });

    expect((await caseStatus(svc, caseId)).waitingTasks).toEqual([
      { taskId, nodeId: taskNodeId, title: 'Approve 120 EUR', dueAt: summary.dueAt },
    ]);
    expect((await audit(svc, caseId)).audit.nodes_execution_data[taskNodeId]?.status).toBe('waiting');
    const metrics = await http(`${svc.url}/metrics`, 'GET');
    expect(metrics.text).toMatch(/caseflow_human_tasks_open [1-9]/);
    expect(metrics.text).not.toContain(svc.workspaceId);
    // Per workspace for the tenant: its open task counted; another organization, or a key without Case: Read, sees none.
    const ours = (await answered(taskStats(), 200)).workspaces.find((w) => w.workspaceId === svc.workspaceId);
    expect(ours?.open).toBeGreaterThanOrEqual(1);
    const theirs = await answered(taskStats(as.otherOrg, { workspaceId: svc.workspaceId }), 200);
    expect(theirs.workspaces).toEqual([]);
    expect((await taskStats(as.noCaseGrant)).response.status).toBe(403);
    // A key scoped to another workspace of this organization counts none of this one's, asked for by id or not.
    const elsewhere = await newKey(svc, ['case:read'], { workspaceIds: [await newWorkspace(svc)] });
    const scoped = createClient({ baseUrl: svc.url, key: elsewhere.key });
    expect((await answered(taskStats(scoped, { workspaceId: svc.workspaceId }), 200)).workspaces).toEqual([]);
    expect((await answered(taskStats(scoped), 200)).workspaces.map((w) => w.workspaceId)).not.toContain(
      svc.workspaceId,
    );

    const detail = await answered(getTask(svc, taskId, as.member), 200);
    expect(detail).toMatchObject({ instructions: 'Pay 120 EUR to the supplier?', outputs: null });
    expect(detail.history.map((h) => h.action)).toEqual(['opened']);

    // Another organization sees nothing; a key without Case: Read may not look.
    expect((await getTask(svc, taskId, as.otherOrg)).response.status).toBe(404);
    expect((await completeTask(svc, taskId, { approved: true }, as.otherOrg)).response.status).toBe(404);
    expect((await getTask(svc, taskId, as.noCaseGrant)).response.status).toBe(403);
    expect((await listTasks(svc, { caseId }, as.otherOrg)).items).toEqual([]);

    const claimed = await answered(claim(taskId, as.member), 200);
    expect(claimed).toMatchObject({ status: 'claimed', claimedBy: memberId });
    expect((await claim(taskId)).response.status).toBe(409);
    const mine = await listTasks(svc, { assignee: 'me', status: 'claimed' }, as.member);
    expect(mine.items.map((t) => t.taskId)).toContain(taskId);

    const bad = await completeTask(svc, taskId, { approved: 'yes', extra: 1 }, as.member);
    expect(bad.response.status).toBe(400);
    expect((bad.error?.metadata as { fields: Array<{ field: string }> }).fields.map((f) => f.field).sort()).toEqual([
      'body.outputs.approved',
      'body.outputs.extra',
    ]);
    expect((await task(taskId)).status).toBe('claimed');

    const done = await answered(completeTask(svc, taskId, { approved: false, note: 'too much' }, as.member), 200);
    expect(done).toMatchObject({
      status: 'completed',
      outputs: { approved: false, note: 'too much' },
      decidedBy: memberId,
      decidedVia: 'api',
    });
    const history = done.history;
    expect(history.map((h) => h.action)).toEqual(['opened', 'claimed', 'completed']);
    expect(history[2]?.actorUserId).toBe(memberId);

    expect((await completeTask(svc, taskId, { approved: true })).response.status).toBe(409);
    expect((await waitForEnd(svc, caseId)).status).toBe('COMPLETED');
    expect(await results(svc, caseId)).toMatchObject({
      approved: { value: false },
      note: { value: 'too much' },
    });
    const node = (await audit(svc, caseId)).audit.nodes_execution_data[taskNodeId];
    expect(node?.status).toBe('completed');
    expect(JSON.stringify(node?.logs)).toContain(`completed by user ${memberId} via api`);
    expect((await http(`${svc.url}/metrics`, 'GET')).text).toMatch(/caseflow_human_task_decision_seconds_count [1-9]/);
  });

  it('refuses decisions to a key that is neither Case: Full nor the assignee, and reassigns with Case: Full', async () => {
    const caseId = await startCase(svc, workflowId, { amount: 5 });
    const { taskId } = await taskOf(svc, caseId);
    const admins: ReassignBody = { assignee: { type: 'role', role: 'admin' } };
    expect((await reassign(taskId, admins, as.member)).response.status).toBe(403);
    const moved = await answered(reassign(taskId, admins), 200);
    expect(moved).toMatchObject({ status: 'open', assignee: admins.assignee });
    expect((await completeTask(svc, taskId, { approved: true }, as.member)).response.status).toBe(403);
    const unknown = await reassign(taskId, { assignee: { type: 'user', user_id: randomUUID() } });
    expect(unknown.response.status).toBe(400);
    await answered(completeTask(svc, taskId, { approved: true }), 200);
    expect((await waitForEnd(svc, caseId)).status).toBe('COMPLETED');
  });

  it('filters by workspace, workflow, due time and status; a claim is given back; the case audit shows each step', async () => {
    const late = await startCase(svc, workflowId, { amount: 7 });
    const lateTask = (await taskOf(svc, late)).taskId;
    // A second approval, due seconds from now (a due time from a date input may be that close), that takes its route.
    const today = new Date().toISOString().slice(0, 10);
    const { graph } = approvalGraph({
      ...process,
      due: { input: 'deadline', offset_ms: Date.now() + 8_000 - Date.parse(today) },
    });
    const soon = await createWorkflow(svc, graph, 'approval due in seconds');
    const early = await startCase(svc, soon.workflowId, { amount: 8, deadline: today });
    const earlyTask = (await taskOf(svc, early)).taskId;

    const ids = async (query: Parameters<typeof listTasks>[1]) =>
      (await listTasks(svc, { limit: 100, ...query })).items.map((t) => t.taskId);
    expect(await ids({ workflowId: soon.workflowId })).toEqual([earlyTask]);
    const inHour = new Date(Date.now() + 3600_000).toISOString();
    const dueSoon = await ids({ dueBefore: inHour });
    expect([dueSoon.includes(earlyTask), dueSoon.includes(lateTask)]).toEqual([true, false]);
    // Newest first by default: the later case's task before the earlier one's.
    const newest = await ids({});
    expect(newest.indexOf(earlyTask)).toBeLessThan(newest.indexOf(lateTask));
    expect(await ids({ workspaceId: svc.workspaceId, caseId: late })).toEqual([lateTask]);
    expect(await ids({ workspaceId: await newWorkspace(svc), caseId: late })).toEqual([]);

    // The assignee claims and gives the claim back; an open task has no claim to give back.
    await answered(claim(lateTask, as.member), 200);
    const released = await answered(release(lateTask, as.member), 200);
    expect(released).toMatchObject({ status: 'open', claimedBy: null });
    expect(released.history.map((h) => h.action)).toEqual(['opened', 'claimed', 'released']);
    expect((await release(lateTask, as.member)).response.status).toBe(409);
    const admins: ReassignBody = { assignee: { type: 'role', role: 'admin' } };
    await answered(reassign(lateTask, admins), 200);
    await answered(completeTask(svc, lateTask, { approved: true, note: 'ok' }), 200);
    expect((await waitForEnd(svc, late)).status).toBe('COMPLETED');
    // The case audit has the task's history in the node's log: who did what, when.
    const logs = (await audit(svc, late)).audit.nodes_execution_data[taskNodeId]?.logs ?? [];
    const lines = logs.map((l) => l.message);
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(new RegExp(`^Task ${lateTask} opened: .*"role":"member"`)),
        `Task ${lateTask} claimed by user ${memberId}`,
        `Task ${lateTask} released by user ${memberId}`,
        expect.stringMatching(new RegExp(`^Task ${lateTask} reassigned by user ${svc.userId}: .*"role":"admin"`)),
        expect.stringMatching(new RegExp(`^Task ${lateTask} completed by user ${svc.userId}: .*"note":"ok"`)),
      ]),
    );
    expect([...logs.map((l) => l.at)].sort()).toEqual(logs.map((l) => l.at));

    // The early task passes its due time: expired, its route taken, the case completed.
    expect((await waitForEnd(svc, early)).status).toBe('COMPLETED');
    expect(await ids({ status: 'expired', workflowId: soon.workflowId })).toEqual([earlyTask]);
    expect(await results(svc, early)).toMatchObject({ approved: { value: true } });
    // The workspace's figures count the expiry and the decisions, with the time each took.
    const [figures] = (await answered(taskStats(svc.client, { workspaceId: svc.workspaceId }), 200)).workspaces;
    expect(figures?.expired).toBeGreaterThanOrEqual(1);
    expect(figures?.completed).toBeGreaterThanOrEqual(2);
    expect(figures?.decisionSeconds?.count).toBe(figures?.completed);
    expect(figures?.decisionSeconds?.max).toBeGreaterThan(0);
  });

  it('cancelling the case cancels its open task; lists page by cursor, soonest due first', async () => {
    const caseId = await startCase(svc, workflowId, { amount: 9 });
    const { taskId } = await taskOf(svc, caseId);
    await answered(svc.client.POST('/api/v1/case/{caseId}/cancel', { params: { path: { caseId } } }), 200);
    expect((await waitForEnd(svc, caseId)).status).toBe('CANCELLED');
    expect((await task(taskId)).status).toBe('cancelled');
    expect((await completeTask(svc, taskId, { approved: true })).response.status).toBe(409);

    const seen: Array<string | null> = [];
    let cursor: string | undefined;
    do {
      const page = await listTasks(svc, { sort: 'soonest_due', limit: 1, ...(cursor ? { cursor } : {}) });
      seen.push(...page.items.map((t) => t.dueAt));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(seen.length).toBeGreaterThanOrEqual(3);
    expect([...seen].sort()).toEqual(seen);
  });
});
