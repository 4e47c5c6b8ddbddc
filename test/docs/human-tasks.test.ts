import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestResponse, type TestService } from '../support/harness.js';
import { fill, walkthrough } from './walkthrough.js';

/** What later requests may name: the string fields of an answer and of its first listed item. */
function remember(values: Record<string, string>, body: Record<string, unknown>): void {
  const [first] = Array.isArray(body.items) ? (body.items as Array<Record<string, unknown>>) : [];
  for (const source of [body, first ?? {}])
    for (const [key, value] of Object.entries(source)) if (typeof value === 'string') values[key] = value;
}

/** A read the doc says may need a moment (the task opening, the case finishing): asked again until it answers. */
function settled(response: TestResponse): boolean {
  if (response.status === 202) return false;
  return !Array.isArray(response.body.items) || response.body.items.length > 0;
}

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.stop();
});

describe('docs/human-tasks.md walk-through', () => {
  it('runs every request of the doc in order: the case waits for the approval, takes it once and finishes', async () => {
    const requests = walkthrough('human-tasks.md');
    const values: Record<string, string> = { workspaceId: svc.workspaceId };
    const answers: TestResponse[] = [];
    for (const request of requests) {
      const send = () =>
        svc.request(request.method, fill(request.path, values), {
          headers: Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, fill(v, values)])),
          ...(request.body ? { body: JSON.parse(fill(request.body, values)) as unknown } : {}),
        });
      let response = await send();
      for (const until = Date.now() + 30_000; request.method === 'GET' && !settled(response) && Date.now() < until;) {
        await new Promise((r) => setTimeout(r, 100));
        response = await send();
      }
      answers.push(response);
      if (response.status < 300) remember(values, response.body);
    }
    expect(answers.map((a) => a.status)).toEqual([201, 201, 202, 200, 200, 200, 200, 409, 200, 200]);
    const [, , , list, status, task, done, , results, stats] = answers;
    expect(list?.body.items).toEqual([expect.objectContaining({ title: 'Approve 1250 EUR', status: 'open' })]);
    expect(status?.body.waitingTasks).toEqual([expect.objectContaining({ taskId: values.taskId })]);
    expect(task?.body.instructions).toBe('Pay 1250 EUR to the supplier?');
    expect(done?.body).toMatchObject({ status: 'completed', outputs: { approved: true, note: 'Within budget' } });
    expect(results?.body.results).toMatchObject({ approved: { value: true }, note: { value: 'Within budget' } });
    expect(stats?.body.workspaces).toEqual([
      expect.objectContaining({
        workspaceId: svc.workspaceId,
        open: 0,
        completed: 1,
        decisionSeconds: expect.objectContaining({ count: 1 }),
      }),
    ]);
  });
});
