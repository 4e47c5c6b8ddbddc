import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildCaseActivities } from '../../activities/child-cases.js';
import type { CaseActivities, EndCaseInput } from '../../activities/cases.js';
import type { TaskActivities } from '../../activities/tasks.js';
import { caseRunRevision } from '../../src/domain/case-run-changes.js';
import type { CaseRunInput } from '../../src/domain/cases.js';
import type { ChildCaseRequest } from '../../src/temporal/contracts/child-case.js';
import { caseRunContract, caseWorkflowId } from '../../src/temporal/contracts/case-run.js';
import { startWorkflow } from '../../src/temporal/contracts/start.js';
import { Graph, vars } from '../support/graphs.js';
import { WorkflowLogic } from './support.js';

/**
 * A call_workflow node after a wait on a person, over mocked rows: the case deadline leaves the wait out, so the
 * child gets what the parent had left of its deadline, not a deadline that passed while the person decided.
 */
type Mocks = Pick<CaseActivities, 'endCase'> & TaskActivities & ChildCaseActivities;
let logic: WorkflowLogic<Mocks>;

beforeAll(async () => {
  logic = await WorkflowLogic.start<Mocks>([
    'endCase',
    'openHumanTask',
    'closeHumanTask',
    'escalateHumanTask',
    'startChildCase',
    'endUnstartedChildCase',
  ]);
});
afterAll(async () => {
  await logic?.stop();
});

const hour = 3_600_000;

/** input(amount) → human_task "Approve" (due in 2 h: takes its route) → call_workflow "Pay" (approved) → output. */
function approvalThenCall(): Graph {
  const g = new Graph();
  const input = g.input([{ name: 'amount', type: 'float' }]);
  const form = vars([]);
  form.schema.approved = { id: 'approved', variable_name: 'approved', allowed_types: [{ type: 'bool' }] };
  const task = g.node({
    name: 'Approve',
    type: 'human_task',
    handler_class: 'human_task',
    input_schema: vars([{ name: 'amount', type: 'float' }]),
    output_schema: form,
    routes: { approved: { id: 'approved', name: 'Approved' } },
    properties: ['route'],
    process: {
      title: 'Approve {{ amount }}',
      assignee: { type: 'workspace' },
      due: { after_ms: 2 * hour },
      on_due: { action: 'route', route_id: 'approved' },
    },
  });
  const call = g.node({
    name: 'Pay',
    type: 'subworkflow',
    handler_class: 'call_workflow',
    process: { workflow_id: randomUUID() },
    input_schema: vars([{ name: 'approved', type: 'bool' }]),
    output_schema: vars([{ name: 'approved', type: 'bool' }]),
  });
  const output = g.output([{ name: 'approved', type: 'bool' }]);
  g.edge(input, task);
  g.edge(task, call, { route_id: 'approved' });
  g.edge(task, call, { route_id: 'approved', route_complement: true });
  g.edge(call, output);
  return g;
}

/** The callee: input(approved) → output(approved). */
function callee(): Graph {
  const g = new Graph();
  g.chain(g.input([{ name: 'approved', type: 'bool' }]), g.output([{ name: 'approved', type: 'bool' }]));
  return g;
}

describe('a call after a wait on a person', () => {
  it("gives the child what is left of the parent's deadline, the wait left out", async () => {
    const organizationId = randomUUID();
    const workspaceId = randomUUID();
    const input: CaseRunInput = {
      caseId: randomUUID(),
      organizationId,
      workspaceId,
      graph: approvalThenCall().body(),
      inputs: { amount: 30 },
      deadlineMs: hour,
      revision: caseRunRevision,
    };
    const requests: ChildCaseRequest[] = [];
    const ends: EndCaseInput[] = [];
    const run = await logic.run(
      {
        endCase: (end) => {
          ends.push(end);
          return Promise.resolve({});
        },
        openHumanTask: () => Promise.resolve(),
        closeHumanTask: () => Promise.resolve(),
        escalateHumanTask: () => Promise.resolve(),
        startChildCase: (request) => {
          requests.push(request);
          const child: CaseRunInput = {
            caseId: request.childCaseId,
            organizationId,
            workspaceId,
            graph: callee().body(),
            inputs: request.inputs,
            deadlineMs: Math.max(1, request.remainingMs),
            revision: caseRunRevision,
            callDepth: 1,
          };
          return Promise.resolve({ input: child, summary: 'Pay', details: 'child of the approval' });
        },
        endUnstartedChildCase: () => Promise.resolve(),
      },
      (client, taskQueue) =>
        startWorkflow(client.workflow, caseRunContract, {
          taskQueue,
          workflowId: caseWorkflowId(input.caseId),
          args: [input],
        }),
    );
    // Two hours on the person, then the call: the child may still run for (nearly) the parent's whole hour.
    expect(run.workflowMs).toBeGreaterThanOrEqual(2 * hour);
    expect(requests).toHaveLength(1);
    expect(requests[0]?.remainingMs).toBeGreaterThan(hour - 60_000);
    expect(requests[0]?.remainingMs).toBeLessThanOrEqual(hour);
    expect(run.result).toMatchObject({ status: 'COMPLETED', results: { approved: { value: true } } });
    expect(ends.map((e) => e.finalize.status).sort()).toEqual(['COMPLETED', 'COMPLETED']);
  });
});
