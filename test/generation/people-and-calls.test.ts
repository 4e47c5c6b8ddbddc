import { describe, expect, it } from 'vitest';
import { OfflinePlanner } from '../../src/generation/offline-planner.js';
import { assembleGraph } from '../../src/generation/graph-assembly.js';
import { dryRunGraph } from '../../src/generation/dry-run-graph.js';
import { planFromProcess } from '../../src/generation/process-plan.js';
import { callStepProblems } from '../../src/generation/toolbox.js';
import type { SourceStep } from '../../src/generation/process-types.js';
import type { WorkflowTool } from '../../src/generation/workspace-workflows.js';
import { validateGraph } from '../../src/domain/graph-validation.js';
import type { Plan, StepBuild } from '../../src/domain/generation/plan.js';

const planner = new OfflinePlanner();
const creditCheck: WorkflowTool = {
  workflow_id: '2f1c9a52-0001-4000-8000-000000000001',
  name: 'Credit check',
  description: 'Scores a customer',
  inputs: [{ name: 'customer_id', type: 'str', optional: false }],
  outputs: [{ name: 'score', type: 'int' }],
};

async function planned(prompt: string, workflows: WorkflowTool[] = []) {
  const plan = (await planner.architect({ prompt, files: [], feedback: [], tools: [], workflows })).value;
  const builds: Record<string, StepBuild> = {};
  for (const step of plan.steps)
    builds[step.id] = (await planner.build({ prompt, plan, step, feedback: [], tools: [], workflows })).value;
  return { plan, builds, assembled: assembleGraph('run-1', plan, builds) };
}

const nodesOf = (graph: ReturnType<typeof assembleGraph>['graph'], handler: string) =>
  Object.values(graph.nodes).filter((n) => n.handler_class === handler);

describe('the offline planner hands a decision to a person', () => {
  it('"send it for manager approval" becomes a human_task with approve / reject routes, a form and its values shown', async () => {
    const { plan, builds, assembled } = await planned(
      'Given a purchase request, count the words, then send it for manager approval, and if approved, uppercase the purchase request, otherwise reverse the purchase request.',
    );
    expect(assembled.problems).toEqual([]);
    expect(validateGraph(assembled.graph)).toEqual([]);
    const person = plan.steps.find((s) => s.kind === 'human_task');
    expect(person).toMatchObject({ name: 'send it for manager approval', branch_of: null });
    expect(person?.outputs).toEqual([
      { name: 'approved', type: 'bool' },
      { name: 'comment', type: 'str' },
    ]);
    // The two sides of the decision.
    expect(
      plan.steps.filter((s) => s.branch_of?.condition === person?.id).map((s) => [s.name, s.branch_of?.when]),
    ).toEqual([
      ['uppercase the purchase request', true],
      ['reverse the purchase request', false],
    ]);
    expect(builds[person!.id]?.unresolved).toBeNull();

    const [node] = nodesOf(assembled.graph, 'human_task');
    expect(node?.type).toBe('human_task');
    const fields = Object.values(node?.output_schema?.schema ?? {});
    const decision = fields.find((f) => f.variable_name === 'approved');
    expect(decision?.allowed_types).toEqual([{ type: 'bool' }]);
    expect(fields.find((f) => f.variable_name === 'comment')).toMatchObject({ is_nullable: true, is_optional: true });
    expect(Object.keys(node?.routes ?? {})).toEqual([decision?.id]);
    const leaving = Object.values(assembled.graph.edges).filter((e) => e.from_node_id === node?.id);
    expect(leaving.map((e) => [e.route_id, e.route_complement ?? false]).sort()).toEqual([
      [decision?.id, false],
      [decision?.id, true],
    ]);
    // Manager is no role of an organization: anyone with access to the workspace, and the instructions say so.
    expect(node?.process).toMatchObject({
      title: 'Send it for manager approval: {{ purchase_request }}',
      assignee: { type: 'workspace' },
    });
    expect(String(node?.process?.instructions)).toContain('- purchase request: {{ purchase_request }}');
    expect(String(node?.process?.instructions)).toContain('"manager" is no role of the organization');
  });

  it('assigns a role the prompt names, and other phrasings of a person deciding', async () => {
    const admin = await planned('Given an expense amount, ask an admin to approve it.');
    expect(nodesOf(admin.assembled.graph, 'human_task')[0]?.process?.assignee).toEqual({ type: 'role', role: 'admin' });
    const manager = await planned('Given a refund request, a manager approves it, then uppercase the refund request.');
    expect(manager.plan.steps.map((s) => s.kind)).toEqual(['human_task', 'code']);
    expect(validateGraph(manager.assembled.graph)).toEqual([]);
    // "mark it approved" is the workflow recording a decision, not a person's task.
    const auto = await planned('Given an amount, if the amount is under 100 mark it approved.');
    expect(auto.plan.steps.some((s) => s.kind === 'human_task')).toBe(false);
  });

  it('the dry run answers the task with its first route and says so, instead of waiting', async () => {
    const { assembled } = await planned('Given a purchase request, send it for manager approval.');
    const dry = dryRunGraph(assembled.graph);
    const [original] = nodesOf(assembled.graph, 'human_task');
    const stub = dry?.graph.nodes[original!.id];
    expect(stub).toMatchObject({ handler_class: 'python_code', routes: original?.routes });
    expect(String(stub?.process?.source)).toContain('{\\"approved\\":true,\\"comment\\":null}');
    expect(dry?.notes).toEqual([
      'The dry run did not wait for a person at "send it for manager approval": it assumed the answer approved = true, comment = null; the saved workflow waits for the assignee',
    ]);
    // The applied graph keeps the real task.
    expect(original?.handler_class).toBe('human_task');
  });
});

describe('a discovered process: BPMN user tasks are a person’s', () => {
  const source = (over: Partial<SourceStep>): SourceStep => ({
    id: 'x',
    name: 'x',
    description: null,
    stepType: null,
    stepOrder: null,
    branchId: null,
    branchLabel: null,
    branchSourceStepId: null,
    branchRejoinStepId: null,
    branchOrder: null,
    inputs: [],
    outputs: [],
    integrations: [],
    rules: [],
    ...over,
  });

  it('a userTask becomes a human_task built with the plan (no builder), its form the decision, outputs and a comment', () => {
    const { plan, presets } = planFromProcess({
      ref: { processId: 'p', processVersionId: null, versionNumber: null, name: 'Leave', processUpdatedAt: '' },
      bindings: [],
      process: {
        name: 'Leave request',
        description: null,
        inputs: ['Leave request'],
        outputs: [],
        rules: [],
        integrations: [],
        edges: [],
        steps: [
          source({
            id: 'a',
            name: 'Approve leave',
            stepType: 'userTask',
            stepOrder: 1,
            inputs: ['Leave request'],
            outputs: ['Approver note'],
          }),
          source({
            id: 'b',
            name: 'Uppercase the leave request',
            stepType: 'serviceTask',
            stepOrder: 2,
            inputs: ['Leave request'],
            outputs: ['Shouted'],
          }),
        ],
      },
    });
    expect(plan.steps[0]).toMatchObject({
      kind: 'human_task',
      inputs: ['leave_request'],
      outputs: [
        { name: 'approved', type: 'bool' },
        { name: 'approver_note', type: 'str' },
        { name: 'comment', type: 'str' },
      ],
    });
    expect(plan.steps[1]?.kind).toBe('code');
    expect(presets.s1?.task).toMatchObject({ title: 'Approve leave: {{ leave_request }}', role: null });
    const assembled = assembleGraph('run-2', plan, {
      ...presets,
      s2: { ...presets.s1!, task: null, source: 'def main(inputs):\n    return {"shouted": ""}\n' },
    });
    expect(validateGraph(assembled.graph)).toEqual([]);
  });
});

describe('the offline planner calls a workflow of the workspace that does a step', () => {
  it('a prompt naming an existing workflow’s job becomes a call_workflow node, inputs mapped and outputs used downstream', async () => {
    const { plan, builds, assembled } = await planned(
      'Given a customer id, run the credit check, then if the score is above 600 ask an admin to approve it.',
      [creditCheck],
    );
    const call = plan.steps[0];
    expect(call).toMatchObject({
      kind: 'call_workflow',
      inputs: ['customer_id'],
      outputs: [{ name: 'score', type: 'int' }],
    });
    expect(builds[call!.id]?.call).toEqual({ workflow_id: creditCheck.workflow_id });
    expect(callStepProblems(plan, builds, [creditCheck])).toEqual([]);
    // The condition compares the callee's result.
    expect(plan.steps.find((s) => s.kind === 'condition')?.inputs).toEqual(['score']);
    expect(validateGraph(assembled.graph)).toEqual([]);
    const [node] = nodesOf(assembled.graph, 'call_workflow');
    expect(node).toMatchObject({ type: 'subworkflow', process: { workflow_id: creditCheck.workflow_id } });
    // The dry run does not start the callee: sample results, said so.
    const dry = dryRunGraph(assembled.graph);
    expect(dry?.notes[0]).toBe(
      `The dry run did not start workflow ${creditCheck.workflow_id} at "run the credit check": it assumed the sample results score = 1; the saved workflow runs it as a child case`,
    );
  });

  it('refuses a build naming a workflow that is not offered, or a step reading less than the callee needs', async () => {
    const { plan, builds } = await planned('Given a customer id, run the credit check.', [creditCheck]);
    const stepId = plan.steps[0]!.id;
    expect(callStepProblems(plan, builds, [])[0]?.message).toContain("is not one of the workspace's active workflows");
    const starved: Plan = { ...plan, steps: plan.steps.map((s) => ({ ...s, inputs: [] })) };
    expect(callStepProblems(starved, builds, [creditCheck])).toEqual([
      { stepId, message: 'workflow Credit check needs the input "customer_id", which the step does not read' },
    ]);
    // Without a fitting workflow nothing is called.
    const none = await planned('Given a customer id, run the credit check.', []);
    expect(none.plan.steps.some((s) => s.kind === 'call_workflow')).toBe(false);
  });
});
