import { expect } from 'vitest';
import type { TestService } from '../support/harness.js';

/** The case's one task, once the run has opened it (as the inbox lists it). */
export async function taskOf(svc: TestService, caseId: string): Promise<Record<string, unknown>> {
  for (const until = Date.now() + 30_000; Date.now() < until;) {
    const list = await svc.request('GET', `/api/v1/tasks?caseId=${caseId}`);
    expect(list.status, list.text).toBe(200);
    const [first] = list.body.items as Array<Record<string, unknown>>;
    if (first) return first;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`case ${caseId} opened no task`);
}
