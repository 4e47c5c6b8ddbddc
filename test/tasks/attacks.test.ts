import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseKey } from '../../src/auth/api-keys.js';
import { createWorkflow, startCase } from '../cases/support.js';
import { http, startTestService, type TestService } from '../support/harness.js';
import { newKey } from '../support/keys.js';
import { approvalGraph } from './graphs.js';
import { completeTask, getTask, taskOf } from './support.js';

/** A tenant's key played against its own tasks: links that outlive their key, decisions past the node limits. */
let svc: TestService;
let workflowId: string;
const maxNodeOutputBytes = 4096;

beforeAll(async () => {
  svc = await startTestService({ config: { cases: { maxNodeOutputBytes } } });
  const { graph } = approvalGraph({ title: 'Approve', instructions: 'Approve?', assignee: { type: 'workspace' } });
  ({ workflowId } = await createWorkflow(svc, graph, 'approval under attack'));
});
afterAll(async () => {
  await svc?.stop();
});

const openTask = async () => (await taskOf(svc, await startCase(svc, workflowId, { amount: 7 }))).taskId;
const taskStatus = async (taskId: string) => (await getTask(svc, taskId)).data?.status;
const submit = (url: string) =>
  http(url, 'POST', {
    key: null,
    rawBody: 'approved=true',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });

describe('a human task, attacked', () => {
  it('takes no answer through a link whose key was revoked: the link acted for that key, as a hook does', async () => {
    const taskId = await openTask();
    const { key } = await newKey(svc, ['case:full']);
    const link = await http(`${svc.url}/api/v1/tasks/${taskId}/link`, 'POST', { key });
    expect(link.status, link.text).toBe(201);
    const url = String(link.body.url);
    expect((await http(url, 'GET', { key: null })).status).toBe(200);

    const revoked = await svc.admin('POST', `/admin/keys/${parseKey(key)?.id}/revoke`);
    expect(revoked.status, revoked.text).toBeLessThan(300);
    for (const answer of [await http(url, 'GET', { key: null }), await submit(url)]) {
      expect(answer.status).toBe(410);
      expect(answer.text).toContain('data-outcome="withdrawn"');
    }
    expect(await taskStatus(taskId)).toBe('open');

    // A link from a key that still may decide the task works as before.
    const again = await svc.request('POST', `/api/v1/tasks/${taskId}/link`);
    expect(again.status, again.text).toBe(201);
    expect((await submit(String(again.body.url))).text).toContain('data-outcome="done"');
  });

  it('refuses outputs over cases.maxNodeOutputBytes with 413: they would be the node outputs no node may return', async () => {
    const taskId = await openTask();
    const big = await completeTask(svc, taskId, { approved: true, note: 'x'.repeat(maxNodeOutputBytes) });
    expect(big.response.status).toBe(413);
    expect(big.error?.metadata).toMatchObject({ field: 'body.outputs', limitBytes: maxNodeOutputBytes });
    expect(await taskStatus(taskId)).toBe('open');
    expect((await completeTask(svc, taskId, { approved: true, note: 'ok' })).response.status).toBe(200);
  });
});
