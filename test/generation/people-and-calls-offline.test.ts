import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answered, startTestService, type TestService } from '../support/harness.js';
import { createWorkflow, results, startCase, waitForEnd } from '../cases/support.js';
import { Graph, py } from '../support/graphs.js';
import { completeTask, getTask, taskOf } from '../tasks/support.js';
import { activate, generate, nodesOf } from './process-support.js';

describe('generation with the offline planner: a person’s decision and a call of a workspace workflow, end to end', () => {
  let svc: TestService;

  beforeAll(async () => {
    svc = await startTestService();
  }, 120_000);
  afterAll(async () => {
    await svc?.stop();
  });

  const reviewerSummaries = (run: Awaited<ReturnType<typeof generate>>['run']) =>
    run.tasks_by_agent
      .filter((t) => t.specialty === 'reviewer')
      .map((t) => t.result_summary)
      .join('\n');

  it('builds an approval as a human_task that validates and saves; the saved workflow waits for the person and takes their route', async () => {
    const { workflowId, run } = await generate(svc, {
      prompt:
        'Given a purchase request, send it for manager approval, and if approved, uppercase the purchase request, otherwise reverse the purchase request.',
    });
    expect(run.status, JSON.stringify(run.tasks_by_agent)).toBe('completed');
    expect(run.needs_attention).toEqual([]);
    expect(run.applied_versions.map((v) => v.stage)).toEqual(['skeleton', 'final']);
    // The dry run did not wait days for a person, and says what it assumed instead.
    expect(reviewerSummaries(run)).toContain(
      'The dry run did not wait for a person at "send it for manager approval": it assumed the answer approved = true, comment = null',
    );
    expect(
      run.tasks_by_agent.some((t) =>
        t.result_summary.includes('as a task for a person (human_task) with approve / reject routes'),
      ),
    ).toBe(true);
    const nodes = await nodesOf(svc, workflowId);
    expect(nodes.find((n) => n.handler_class === 'human_task')).toMatchObject({
      name: 'send it for manager approval',
      process: { title: 'Send it for manager approval: {{ purchase_request }}', assignee: { type: 'workspace' } },
    });

    // The saved workflow really waits: the task opens, a rejection takes the other route.
    await activate(svc, workflowId);
    const caseId = await startCase(svc, workflowId, { purchase_request: 'two chairs' });
    const { taskId } = await taskOf(svc, caseId, { status: 'open' });
    const task = await answered(getTask(svc, taskId), 200);
    expect(task).toMatchObject({ title: 'Send it for manager approval: two chairs' });
    expect(task.instructions).toContain('- purchase request: two chairs');
    await answered(completeTask(svc, taskId, { approved: false, comment: 'Not this quarter' }), 200);
    expect((await waitForEnd(svc, caseId)).status).toBe('COMPLETED');
    const out = await results(svc, caseId);
    expect(out.approved?.value).toBe(false);
    expect(out.comment?.value).toBe('Not this quarter');
    expect(Object.values(out).map((r) => r.value)).toContain('sriahc owt');
    expect(Object.values(out).map((r) => r.value)).not.toContain('TWO CHAIRS');
  }, 120_000);

  it('calls an active workflow of the workspace whose job a step names, as a child case of the saved workflow', async () => {
    const g = new Graph();
    const input = g.input([{ name: 'text' }]);
    const shout = g.python(
      'Shout',
      py('return {"shouted": str(inputs["text"]).upper()}'),
      [{ name: 'text' }],
      [{ name: 'shouted' }],
    );
    const output = g.output([{ name: 'shouted' }]);
    g.edge(input, shout);
    g.edge(shout, output);
    const callee = await createWorkflow(svc, g, 'Shout');

    const { workflowId, run } = await generate(svc, {
      prompt: 'Given a text, run the shout workflow, then count the words.',
    });
    expect(run.status, JSON.stringify(run.tasks_by_agent)).toBe('completed');
    expect(reviewerSummaries(run)).toContain(
      `The dry run did not start workflow ${callee.workflowId} at "run the shout workflow": it assumed the sample results shouted = "sample"`,
    );
    const nodes = await nodesOf(svc, workflowId);
    expect(nodes.find((n) => n.handler_class === 'call_workflow')).toMatchObject({
      name: 'run the shout workflow',
      process: { workflow_id: callee.workflowId },
    });

    await activate(svc, workflowId);
    const caseId = await startCase(svc, workflowId, { text: 'hello big world' });
    expect((await waitForEnd(svc, caseId)).status).toBe('COMPLETED');
    const out = await results(svc, caseId);
    expect(out.shouted?.value).toBe('HELLO BIG WORLD');
    expect(Object.values(out).map((r) => r.value)).toContain(3);
  }, 120_000);
});
