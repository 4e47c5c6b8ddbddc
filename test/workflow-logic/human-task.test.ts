import { randomUUID } from 'node:crypto';
import { WorkflowFailedError, WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CaseActivities, EndCaseInput } from '../../activities/cases.js';
import type { TaskActivities } from '../../activities/tasks.js';
import { caseRunRevision } from '../../src/domain/case-run-changes.js';
import type { CaseRunInput } from '../../src/domain/cases.js';
import {
  assigneeKey,
  taskRefusedType,
  type CloseTaskInput,
  type EscalateTaskInput,
  type OpenTaskInput,
  type TaskAssignee,
  type TaskDecision,
} from '../../src/domain/human-tasks.js';
import {
  caseProgressQuery,
  caseRunContract,
  caseWorkflowId,
  completeTaskUpdate,
} from '../../src/temporal/contracts/case-run.js';
import type { WorkflowOf } from '../../src/temporal/contracts/contract.js';
import { startWorkflow } from '../../src/temporal/contracts/start.js';
import { approvalGraph } from '../tasks/graphs.js';
import { vars } from '../support/graphs.js';
import { until, untilActivitiesTaken, WorkflowLogic } from './support.js';

/**
 * The case run's wait on a person, over mocked task rows: input → human_task
 * "Approve" → output. Hours of due time take milliseconds on the
 * time-skipping server; the server skips no time while the test acts
 * between start and result, so completions there race no timer.
 */
type Mocks = Pick<CaseActivities, 'endCase'> & TaskActivities;
let logic: WorkflowLogic<Mocks>;

beforeAll(async () => {
  logic = await WorkflowLogic.start<Mocks>(['endCase', 'openHumanTask', 'closeHumanTask', 'escalateHumanTask']);
});

afterAll(async () => {
  await logic?.stop();
});

type Handle = WorkflowHandle<WorkflowOf<typeof caseRunContract>>;

interface Recorded {
  opened: OpenTaskInput[];
  closed: CloseTaskInput[];
  escalated: EscalateTaskInput[];
  ends: EndCaseInput[];
}

const hour = 3_600_000;

async function runApproval(
  process: Record<string, unknown>,
  options: {
    input?: Partial<CaseRunInput>;
    whileRunning?: (handle: Handle, seen: Recorded) => Promise<void>;
  } = {},
) {
  const { graph } = approvalGraph(process);
  const input: CaseRunInput = {
    caseId: randomUUID(),
    organizationId: randomUUID(),
    workspaceId: randomUUID(),
    graph: { nodes: graph.nodes, edges: graph.edges },
    inputs: { amount: 120.5, deadline: null },
    deadlineMs: hour,
    revision: caseRunRevision,
    ...options.input,
  };
  const seen: Recorded = { opened: [], closed: [], escalated: [], ends: [] };
  const mocks: Mocks = {
    endCase: (end) => {
      seen.ends.push(end);
      return Promise.resolve({});
    },
    openHumanTask: (task) => {
      seen.opened.push(task);
      return Promise.resolve();
    },
    closeHumanTask: (close) => {
      seen.closed.push(close);
      return Promise.resolve();
    },
    escalateHumanTask: (escalation) => {
      seen.escalated.push(escalation);
      return Promise.resolve();
    },
  };
  const { whileRunning } = options;
  const run = await logic.run(
    mocks,
    (client, taskQueue) =>
      startWorkflow(client.workflow, caseRunContract, {
        taskQueue,
        workflowId: caseWorkflowId(input.caseId),
        args: [input],
      }),
    whileRunning && ((handle) => whileRunning(handle, seen)),
  );
  return { ...run, seen };
}

const approval = {
  title: 'Approve {{ amount }}',
  instructions: 'Pay {{ amount }}?',
  assignee: { type: 'workspace' },
};

function decision(taskId: string, approved: boolean, extra: Partial<TaskDecision> = {}): TaskDecision {
  return {
    taskId,
    outputs: { approved, note: approved ? 'fine' : 'no' },
    actor: { userId: randomUUID(), via: 'api' },
    ...extra,
  };
}

/** Why the run refused an update (the validator's reason), or 'accepted'. */
async function send(handle: Handle, update: TaskDecision): Promise<string> {
  try {
    await handle.executeUpdate(completeTaskUpdate, { args: [update] });
    return 'accepted';
  } catch (err) {
    if (
      err instanceof WorkflowUpdateFailedError &&
      err.cause instanceof ApplicationFailure &&
      err.cause.type === taskRefusedType
    )
      return String(err.cause.details?.[0]);
    throw err;
  }
}

describe('case run: waiting on a person', () => {
  it('refuses a completion once the due time passed: the due timer won, its route is the outcome', async () => {
    // Approve (due in an hour, then its route) → Confirm (no due time) → output: the case still waits when the late
    // completion of Approve comes, so the run itself answers it.
    const { graph } = approvalGraph({
      ...approval,
      due: { after_ms: hour },
      on_due: { action: 'route', route_id: 'approved' },
    });
    const approve = Object.values(graph.nodes).find((n) => n.name === 'Approve')!;
    const output = Object.values(graph.nodes).find((n) => n.type === 'output')!;
    const confirm = graph.node({
      name: 'Confirm',
      type: 'human_task',
      handler_class: 'human_task',
      input_schema: vars([{ name: 'approved', type: 'bool' }]),
      output_schema: vars([{ name: 'confirmed', type: 'bool' }]),
      process: { title: 'Confirm', assignee: { type: 'workspace' } },
    });
    output.input_schema = vars([{ name: 'confirmed', type: 'bool' }]);
    for (const edge of Object.values(graph.edges)) if (edge.to_node_id === output.id) edge.to_node_id = confirm;
    graph.edge(confirm, output.id);
    let refusal = '';
    const { result, seen } = await runApproval(
      {},
      {
        input: { graph: graph.body() },
        whileRunning: async (handle, seen) => {
          await until(() => seen.opened.length === 1);
          // An hour and a second on the server's clock: Approve is due, takes its route, and Confirm opens.
          await logic.skip(hour + 1000);
          await until(() => seen.opened.length === 2);
          refusal = await send(handle, decision(seen.opened[0]!.taskId, false));
          await send(handle, { ...decision(seen.opened[1]!.taskId, true), outputs: { confirmed: true } });
        },
      },
    );
    expect(refusal).toBe('expired');
    expect(seen.opened.map((t) => t.nodeId)).toEqual([approve.id, confirm]);
    expect(seen.closed.map((c) => c.status)).toEqual(['expired', 'completed']);
    expect(result?.status).toBe('COMPLETED');
    expect(result?.results.confirmed?.value).toBe(true);
  });

  it('fails the node with kind timeout once the case waited its maximum on people (cases.maxWaitMs)', async () => {
    // No due time, a one-hour deadline and a three-hour maximum wait: the wait is bounded by the maximum alone.
    const { err, seen, workflowMs } = await runApproval(approval, { input: { maxWaitMs: 3 * hour } });
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect(workflowMs).toBeGreaterThanOrEqual(3 * hour);
    expect(seen.closed).toEqual([
      expect.objectContaining({ status: 'expired', reason: 'The case waited its maximum of 10800000 ms on people' }),
    ]);
    const end = seen.ends[0]?.finalize;
    expect(end?.status).toBe('FAILED');
    const taskNode = end?.progress.nodes[String(seen.opened[0]?.nodeId)];
    expect(taskNode?.error).toMatchObject({
      kind: 'timeout',
      message: 'The case waited its maximum of 10800000 ms on people (cases.maxWaitMs)',
    });
  });

  it('opens the task without a due time when its due date input is null: only the maximum wait ends it', async () => {
    // Due at the nullable `deadline` input, left null; taken for a date already past, the route would end the case.
    const { err, seen, workflowMs } = await runApproval(
      { ...approval, due: { input: 'deadline' }, on_due: { action: 'route', route_id: 'approved' } },
      { input: { maxWaitMs: 3 * hour } },
    );
    expect(seen.opened).toHaveLength(1);
    expect(seen.opened[0]?.wait.dueAt).toBeUndefined();
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect(workflowMs).toBeGreaterThanOrEqual(3 * hour);
    const taskNode = seen.ends[0]?.finalize.progress.nodes[String(seen.opened[0]?.nodeId)];
    expect(taskNode?.error?.kind).toBe('timeout');
  });

  it('opens the task with its rendered instructions, takes the decision, closes the task and completes', async () => {
    let answers: string[] = [];
    const { result, seen } = await runApproval(approval, {
      whileRunning: async (handle, seen) => {
        await until(() => seen.opened.length === 1);
        const progress = await handle.query(caseProgressQuery);
        expect(progress.waitingTasks).toEqual([
          { taskId: seen.opened[0]!.taskId, nodeId: seen.opened[0]!.nodeId, title: 'Approve 120.5' },
        ]);
        expect(progress.nodes[seen.opened[0]!.nodeId]?.status).toBe('waiting');
        const taskId = seen.opened[0]!.taskId;
        // The Temporal UI's current details name the task the case waits for.
        const metadata = await handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
        expect(metadata.currentDetails).toBe(`Waiting for task ${taskId} "Approve 120.5"`);
        // A race of two decisions and a made-up task: one winner, the others refused before any history.
        answers = await Promise.all([
          send(handle, decision(taskId, true)),
          send(handle, decision(taskId, false)),
          send(handle, decision(randomUUID(), true)),
        ]);
      },
    });
    expect([...answers.slice(0, 2)].sort()).toEqual(['accepted', 'completed']);
    expect(answers[2]).toBe('unknown');
    expect(seen.opened[0]?.wait).toMatchObject({
      title: 'Approve 120.5',
      instructions: 'Pay 120.5?',
      assignee: { type: 'workspace' },
    });
    expect(seen.closed).toEqual([
      expect.objectContaining({
        status: 'completed',
        outputs: { approved: answers[0] === 'accepted', note: answers[0] === 'accepted' ? 'fine' : 'no' },
      }),
    ]);
    expect(result?.status).toBe('COMPLETED');
    expect(result?.results.approved?.value).toBe(answers[0] === 'accepted');
  });

  it('takes the route its due timer names, hours later, without the wait counting against the deadline', async () => {
    const { result, seen, workflowMs } = await runApproval(
      { ...approval, due: { after_ms: 5 * hour }, on_due: { action: 'route', route_id: 'approved' } },
      { input: { deadlineMs: 10 * 60_000 } },
    );
    expect(result?.status).toBe('COMPLETED');
    expect(result?.results.approved?.value).toBe(true);
    expect(seen.closed).toEqual([expect.objectContaining({ status: 'expired' })]);
    expect(workflowMs).toBeGreaterThanOrEqual(5 * hour);
  });

  it('escalates once at the due time, then fails the node at the second', async () => {
    const admin = { type: 'role', role: 'admin' };
    const { err, seen, timers } = await runApproval({
      ...approval,
      due: { after_ms: hour },
      on_due: { action: 'escalate', assignee: admin, due_after_ms: 2 * hour },
    });
    expect(seen.escalated).toEqual([expect.objectContaining({ assignee: admin })]);
    expect(seen.closed).toEqual([expect.objectContaining({ status: 'expired' })]);
    // Each due timer is what is left of its due time once the task's row is written.
    const near = (ms: number) => timers.some((t) => t <= ms && t > ms - 1000);
    expect(near(hour) && near(2 * hour)).toBe(true);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const end = seen.ends[0]?.finalize;
    expect(end?.status).toBe('FAILED');
    expect(end?.progress.error?.message).toMatch(/was due at .* and was not completed/);
  });

  it('refuses a completion by the assignee the task escalated away from', async () => {
    const admin: TaskAssignee = { type: 'role', role: 'admin' };
    const answers: string[] = [];
    const { result } = await runApproval(
      { ...approval, due: { after_ms: hour }, on_due: { action: 'escalate', assignee: admin } },
      {
        input: { maxWaitMs: 3 * hour },
        whileRunning: async (handle, seen) => {
          await until(() => seen.opened.length === 1);
          // An hour and a second on the server's clock: the task is due and goes to the admins.
          await logic.skip(hour + 1000);
          await until(() => seen.escalated.length === 1);
          const taskId = seen.opened[0]!.taskId;
          answers.push(await send(handle, decision(taskId, true, { asAssignee: 'workspace' })));
          // The new assignee decides, so the run ends here rather than at its maximum wait.
          answers.push(await send(handle, decision(taskId, true, { asAssignee: assigneeKey(admin) })));
        },
      },
    );
    expect(answers).toEqual(['unauthorized', 'accepted']);
    expect(result?.status).toBe('COMPLETED');
    expect(result?.results.approved?.value).toBe(true);
  });

  it('cancelling the case cancels its open task', async () => {
    const { seen } = await runApproval(approval, {
      whileRunning: async (handle, seen) => {
        await until(() => seen.opened.length === 1);
        // The cancel comes while the task waits, not while its row is being opened (see untilActivitiesTaken).
        await untilActivitiesTaken(handle);
        await handle.cancel();
      },
    });
    expect(seen.closed).toEqual([expect.objectContaining({ status: 'cancelled' })]);
    expect(seen.ends[0]?.finalize.status).toBe('CANCELLED');
  });
});
