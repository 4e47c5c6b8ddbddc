import type { CaseflowClient, paths } from '../../src/client/index.js';
import { answered, type TestService } from '../support/harness.js';

type ListQuery = NonNullable<paths['/api/v1/tasks']['get']['parameters']['query']>;
type Outputs =
  paths['/api/v1/tasks/{taskId}/complete']['post']['requestBody']['content']['application/json']['outputs'];

/** A page of the task list (200), read as `client` (the service's own key by default). */
export function listTasks(svc: TestService, query: ListQuery, client: CaseflowClient = svc.client) {
  return answered(client.GET('/api/v1/tasks', { params: { query } }), 200);
}

/** The first task of the case the list shows with `query`, once the run has opened it. */
export async function taskOf(svc: TestService, caseId: string, query: ListQuery = {}, timeoutMs = 30_000) {
  for (const until = Date.now() + timeoutMs; Date.now() < until;) {
    const [first] = (await listTasks(svc, { ...query, caseId })).items;
    if (first) return first;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`case ${caseId} opened no task`);
}

export function getTask(svc: TestService, taskId: string, client: CaseflowClient = svc.client) {
  return client.GET('/api/v1/tasks/{taskId}', { params: { path: { taskId } } });
}

export function completeTask(svc: TestService, taskId: string, outputs: Outputs, client: CaseflowClient = svc.client) {
  return client.POST('/api/v1/tasks/{taskId}/complete', { params: { path: { taskId } }, body: { outputs } });
}
