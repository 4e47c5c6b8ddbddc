import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.js';
import { createWorkflow } from '../cases/support.js';
import { Graph, py } from '../support/graphs.js';
import { FakeLlm, planStep as step, stepOf, type ChatRequest, type Reply } from './fake-llm.js';
import { generate, nodesOf } from './process-support.js';

/** The architect's plan: the credit check as a call, a manager's approval, a step on each side of the decision. */
const plan = {
  name: 'Onboard customer',
  description: 'Credit check, approval, welcome or decline',
  inputs: [{ name: 'customer_id', type: 'str', description: 'The customer', sample: '"C-1"' }],
  steps: [
    step('s1', 'Credit check', {
      kind: 'call_workflow',
      description: 'Runs the workspace workflow Credit check',
      inputs: ['customer_id'],
      outputs: [{ name: 'score', type: 'int' }],
    }),
    step('s2', 'Manager approval', {
      kind: 'human_task',
      inputs: ['customer_id', 'score'],
      outputs: [
        { name: 'approved', type: 'bool' },
        { name: 'comment', type: 'str' },
      ],
    }),
    step('s3', 'Welcome', {
      inputs: ['customer_id'],
      outputs: [{ name: 'message', type: 'str' }],
      branch_of: { condition: 's2', when: true },
    }),
    step('s4', 'Decline', {
      inputs: ['customer_id'],
      outputs: [{ name: 'message', type: 'str' }],
      branch_of: { condition: 's2', when: false },
    }),
  ],
  outputs: [
    { name: 'approved', type: 'bool' },
    { name: 'message', type: 'str' },
  ],
};

const nothing = { source: null, match: null, rules: null, llm: null, action: null, task: null, call: null };
const code = (body: string) => ({ ...nothing, source: `def main(inputs):\n    ${body}\n`, unresolved: null });

describe('LLM builders make human tasks and workflow calls', () => {
  let svc: TestService;
  const llm = new FakeLlm();

  beforeAll(async () => {
    await llm.start();
    svc = await startTestService({ config: { llm: { baseUrl: llm.url, apiKey: 'sk-people-llm', timeoutMs: 3000 } } });
  });
  afterAll(async () => {
    await svc?.stop();
    await llm.stop();
  });

  it('offers the workspace’s workflows, sends a call of an unknown workflow back, and applies both kinds (completed)', async () => {
    const g = new Graph();
    const input = g.input([{ name: 'customer_id' }]);
    const score = g.python(
      'Score',
      py('return {"score": 700}'),
      [{ name: 'customer_id' }],
      [{ name: 'score', type: 'int' }],
    );
    const output = g.output([{ name: 'score', type: 'int' }]);
    g.edge(input, score);
    g.edge(score, output);
    const callee = await createWorkflow(svc, g, 'Credit check');

    const offered = (request: ChatRequest) =>
      (JSON.parse(request.messages[1]?.content ?? '{}') as { workflows?: Array<{ workflow_id: string }> }).workflows;
    llm.script = (agent, request, n): Reply => {
      if (agent === 'triage') return { json: { relevant: true, reason: 'a process' } };
      if (agent === 'plan') return { json: plan };
      switch (stepOf(request)) {
        case 's1': {
          // The first answer names a workflow that was not offered: the reviewer sends it back.
          const calls = llm.calls.filter((c) => c.agent === 'step_build' && stepOf(c.request) === 's1').length;
          const id = calls === 1 ? '00000000-0000-4000-8000-000000000000' : offered(request)?.[0]?.workflow_id;
          return { json: { ...nothing, call: { workflow_id: id }, unresolved: null } };
        }
        case 's2':
          return {
            json: {
              ...nothing,
              task: {
                title: 'Approve customer {{ customer_id }}',
                instructions: 'Credit score: {{ score }}. A manager was asked for; admins decide.',
                role: 'admin',
              },
              unresolved: null,
            },
          };
        case 's3':
          return { json: code('return {"message": "welcome " + inputs["customer_id"]}') };
        case 's4':
          return { json: code('return {"message": "declined " + inputs["customer_id"]}') };
        default:
          return { raw: { status: 500, body: `unexpected call ${n}` } };
      }
    };
    const { workflowId, run } = await generate(svc, {
      prompt: 'Check the credit of a new customer, then a manager approves; welcome or decline them',
    });
    expect(run, JSON.stringify(run.tasks_by_agent)).toMatchObject({ status: 'completed', needs_attention: [] });

    // The architect sees the workflows without ids; the builder of the call step gets the ids, the others none.
    const architect = llm.calls.find((c) => c.agent === 'plan')?.request;
    expect(architect?.messages[1]?.content).toContain('Workflows of the workspace (for call_workflow steps)');
    expect(architect?.messages[1]?.content).toContain('"name":"Credit check"');
    expect(architect?.messages[1]?.content).not.toContain(callee.workflowId);
    expect(architect?.messages[0]?.content).toContain('kind "human_task"');
    const builds = llm.calls.filter((c) => c.agent === 'step_build');
    const callBuilds = builds.filter((c) => stepOf(c.request) === 's1');
    expect(callBuilds).toHaveLength(2);
    expect(offered(callBuilds[0]!.request)?.map((w) => w.workflow_id)).toEqual([callee.workflowId]);
    expect(callBuilds[1]?.request.messages[1]?.content).toContain(
      "workflow 00000000-0000-4000-8000-000000000000 is not one of the workspace's active workflows offered for calls",
    );
    const personBuild = builds.find((c) => stepOf(c.request) === 's2')?.request;
    expect(offered(personBuild!)).toBeUndefined();
    expect(personBuild?.messages[0]?.content).toContain('For a step of kind "human_task"');
    const schema = personBuild?.response_format?.json_schema?.schema as { required?: string[] } | undefined;
    expect(schema?.required).toEqual(expect.arrayContaining(['task', 'call']));

    const nodes = await nodesOf(svc, workflowId);
    expect(nodes.find((n) => n.handler_class === 'call_workflow')).toMatchObject({
      name: 'Credit check',
      process: { workflow_id: callee.workflowId },
    });
    expect(nodes.find((n) => n.handler_class === 'human_task')).toMatchObject({
      name: 'Manager approval',
      process: {
        title: 'Approve customer {{ customer_id }}',
        instructions: 'Credit score: {{ score }}. A manager was asked for; admins decide.',
        assignee: { type: 'role', role: 'admin' },
      },
    });
    const review = run.tasks_by_agent.filter((t) => t.specialty === 'reviewer').at(-1)?.result_summary;
    expect(review).toContain('The dry run did not wait for a person at "Manager approval"');
    expect(review).toContain(`The dry run did not start workflow ${callee.workflowId} at "Credit check"`);
  }, 120_000);
});
