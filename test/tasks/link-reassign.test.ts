import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkflow, startCase } from '../cases/support.js';
import { http, startTestService, type TestService } from '../support/harness.js';
import { newKey } from '../support/keys.js';
import { approvalGraph } from './graphs.js';
import { taskOf } from './support.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.stop();
});

describe('a completion link', () => {
  it('dies when the task is reassigned: the person it was given to no longer decides', async () => {
    const { graph } = approvalGraph({ title: 'Approve', instructions: 'Approve?', assignee: { type: 'workspace' } });
    const { workflowId } = await createWorkflow(svc, graph, 'reassigned approval');
    const caseId = await startCase(svc, workflowId, { amount: 7 });
    const { taskId } = await taskOf(svc, caseId);
    const link = await svc.request('POST', `/api/v1/tasks/${taskId}/link`);
    expect(link.status, link.text).toBe(201);
    const url = String(link.body.url);
    expect((await http(url, 'GET', { key: null })).status).toBe(200);

    const { userId } = await newKey(svc, ['case:read']);
    const moved = await svc.request('POST', `/api/v1/tasks/${taskId}/reassign`, {
      body: { assignee: { type: 'user', user_id: userId } },
    });
    expect(moved.status, moved.text).toBe(200);
    const page = await http(url, 'GET', { key: null });
    expect(page.status).toBe(400);
    const submitted = await http(url, 'POST', {
      key: null,
      rawBody: 'approved=true',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(submitted.status).toBe(400);
    expect((await svc.request('GET', `/api/v1/tasks/${taskId}`)).body.status).toBe('open');
  });
});
