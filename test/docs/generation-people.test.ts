import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.js';
import { finishedRun, nodesOf } from '../generation/process-support.js';
import { runWalkthrough, walkthrough } from './walkthrough.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.stop();
});

describe('docs/generation.md: Steps for a person and calls of other workflows', () => {
  it('runs the walk-through as written', async () => {
    const steps = walkthrough('generation.md', 'Steps for a person and calls of other workflows');
    expect(steps.map((s) => `${s.method} ${s.status}`)).toEqual(['POST 201', 'POST 202', 'GET 200', 'GET 200']);
    const started = await runWalkthrough(svc, steps.slice(0, 2));
    const callee = started.callee as { workflowId: string };
    const { workflowId } = started.gen as { workflowId: string };
    // The doc says to poll until the run has ended; the later requests read its result.
    const run = await finishedRun(svc, workflowId);
    await runWalkthrough(
      svc,
      steps.slice(2).map((s) => ({ ...s, path: s.path.replace('{gen.workflowId}', workflowId) })),
    );
    const review = run.tasks_by_agent.filter((t) => t.specialty === 'reviewer').at(-1)?.result_summary;
    expect(review).toContain('The dry run did not wait for a person at "send it for manager approval"');
    expect(review).toContain(`The dry run did not start workflow ${callee.workflowId} at "run the shout workflow"`);
    // What the doc says of the final version.
    const nodes = await nodesOf(svc, workflowId);
    expect(nodes.find((n) => n.handler_class === 'call_workflow')?.process).toEqual({
      workflow_id: callee.workflowId,
    });
    expect(nodes.find((n) => n.handler_class === 'human_task')?.process).toMatchObject({
      title: 'Send it for manager approval: {{ text }}',
      assignee: { type: 'workspace' },
    });
  });
});
