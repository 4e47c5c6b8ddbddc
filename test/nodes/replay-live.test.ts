import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { ApplicationFailure } from '@temporalio/activity';
import { Client, type WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { NativeConnection, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  nodeFailedType,
  type CaseActivities,
  type NodeFailureDetails,
  type RunNodeRequest,
} from '../../activities/cases.js';
import type { ChildCaseActivities } from '../../activities/child-cases.js';
import type { TaskActivities } from '../../activities/tasks.js';
import { caseRunRevision } from '../../src/domain/case-run-changes.js';
import type { CaseRunInput } from '../../src/domain/cases.js';
import type { WorkflowNode } from '../../src/domain/graph.js';
import { busyFailureKind } from '../../src/domain/node-kinds/kind.js';
import {
  caseProgressQuery,
  caseRunContract,
  caseWorkflowId,
  completeTaskUpdate,
} from '../../src/temporal/contracts/case-run.js';
import type { WorkflowOf } from '../../src/temporal/contracts/contract.js';
import { runTags } from '../../src/temporal/contracts/search-attributes.js';
import { startWorkflow } from '../../src/temporal/contracts/start.js';
import { workflowBundlePath } from '../../src/temporal/worker.js';
import { Graph, vars, type Var } from '../support/graphs.js';

/**
 * Case runs of every node kind made now, on the real dev server over mocked activities, then replayed
 * from their histories (and a worker that keeps four runs cached replays the others' tasks as they
 * go). Among them, parallel local activities that end apart: a node completes and starts a regular
 * activity, then its sibling is turned away as busy (or fails) and waits on a timer. Before outcomes
 * took turns (workflows/node-turns.ts) such a run did not replay: the two local activities come back
 * together, and the busy one's timer came before the other's activity. The runs' status is read by
 * the progress query while they go, as the API does.
 *
 * `CASEFLOW_RECORD_HISTORIES=<dir>` writes each history there (how test/nodes/histories/turns-*.bin
 * were recorded; the payloads are the mocks' plain JSON).
 */
type CaseRun = WorkflowOf<typeof caseRunContract>;
type Mocks = Pick<CaseActivities, 'runNode' | 'runLastNode' | 'caseEnd' | 'endCase' | 'checkCreator'> &
  ChildCaseActivities &
  TaskActivities;

/** What a mocked node does: it takes `ms`, is turned away as busy on its first `busy` calls, fails its first `fails`. */
interface Act {
  name: string;
  ms?: number;
  busy?: number;
  fails?: number;
  /** Its limit is above the local-activity bound: a regular activity. */
  regular?: boolean;
}

const acts = new Map<string, Act>();
const calls = new Map<string, number>();
const float = (name: string): Var[] => [{ name, type: 'float' }];

function refusal(kind: string): ApplicationFailure {
  const at = new Date().toISOString();
  const details: NodeFailureDetails = {
    error: { message: `${kind} on purpose`, kind },
    logs: [],
    retryAfterMs: 50,
    startedAt: at,
    finishedAt: at,
  };
  return ApplicationFailure.create({ message: details.error.message, type: nodeFailedType, details: [details] });
}

async function runNode({ node, caseId }: RunNodeRequest) {
  const act = acts.get(node.id) ?? { name: node.name };
  const call = (calls.get(`${caseId}:${node.id}`) ?? 0) + 1;
  calls.set(`${caseId}:${node.id}`, call);
  const startedAt = new Date().toISOString();
  await delay(act.ms ?? 0);
  if (call <= (act.busy ?? 0)) throw refusal(busyFailureKind);
  if (call <= (act.fails ?? 0)) throw refusal('error');
  const outputs = Object.fromEntries(Object.values(node.output_schema?.schema ?? {}).map((v) => [v.variable_name, 1]));
  return { outputs, logs: [], startedAt, finishedAt: new Date().toISOString() };
}

/** A Python node doing `act` (its source is never run: runNode is mocked). */
function python(g: Graph, act: Act, input: string, output: string): string {
  const extra: Partial<WorkflowNode> = {
    execution: { timeout_ms: act.regular ? 20_000 : 5_000, max_attempts: (act.fails ?? 0) + 1 },
  };
  const id = g.python(act.name, 'def main(inputs):\n    return inputs\n', float(input), float(output), extra);
  acts.set(id, act);
  return id;
}

/** input → each act in turn → output. */
function chain(...steps: Act[]): Graph {
  const g = new Graph();
  const ids = [g.input(float('a')), ...steps.map((act) => python(g, act, 'a', 'a')), g.output(float('a'))];
  g.chain(...ids);
  return g;
}

/** input → branches side by side (each a chain of acts) → a joining node → output. */
function fan(...branches: Act[][]): Graph {
  const g = new Graph();
  const input = g.input(float('a'));
  const join = python(g, { name: 'Join' }, 'a', 'a');
  // The join takes one variable from each branch.
  const joined = g.nodes[join];
  if (joined) joined.input_schema = vars(branches.map((_, i) => ({ name: `v${i}`, type: 'float' })));
  branches.forEach((acts, i) => {
    const ids = acts.map((act, j) => python(g, act, j === 0 ? 'a' : `v${i}`, `v${i}`));
    g.chain(input, ...ids, join);
  });
  g.edge(join, g.output(float('a')));
  return g;
}

/** input → condition (a above 1) → one Python node when it holds, another (skipped) when not → output. */
function route(): Graph {
  const g = new Graph();
  const input = g.input(float('a'));
  const check = g.condition('Above one', float('a'), 'above', {
    all: [{ left: { var: 'a' }, op: 'gt', right: { value: 1 } }],
  });
  const yes = python(g, { name: 'Yes', ms: 50 }, 'a', 'a');
  const no = python(g, { name: 'No', ms: 50 }, 'a', 'a');
  const output = g.output([{ name: 'a', type: 'float', optional: true }]);
  g.edge(input, check);
  g.route(check, yes);
  g.route(check, no, true);
  g.edge(yes, output);
  g.edge(no, output);
  return g;
}

/** input → a Python node → human_task (the test completes it) → a Python node → output. */
function personTask(): Graph {
  const g = new Graph();
  const task = g.node({
    name: 'Approve',
    type: 'human_task',
    handler_class: 'human_task',
    input_schema: vars(float('a')),
    output_schema: vars(float('a')),
    process: { title: 'Approve {{ a }}', assignee: { type: 'workspace' } },
  });
  const before = python(g, { name: 'Before', ms: 100 }, 'a', 'a');
  const after = python(g, { name: 'After', ms: 100 }, 'a', 'a');
  g.chain(g.input(float('a')), before, task, after, g.output(float('a')));
  return g;
}

/** input → a Python node → call_workflow (its child case: two Python nodes) → output. */
function call(): Graph {
  const g = new Graph();
  const node = g.node({
    name: 'Call',
    type: 'subworkflow',
    handler_class: 'call_workflow',
    process: { workflow_id: randomUUID() },
    input_schema: vars(float('a')),
    output_schema: vars(float('a')),
  });
  g.chain(g.input(float('a')), python(g, { name: 'Before call', ms: 100 }, 'a', 'a'), node, g.output(float('a')));
  return g;
}

const organizationId = randomUUID();
const workspaceId = randomUUID();
const taskQueue = `replay-live-${randomUUID()}`;

function caseInput(graph: Graph, extra: Partial<CaseRunInput> = {}): CaseRunInput {
  return {
    caseId: randomUUID(),
    organizationId,
    workspaceId,
    graph: graph.body(),
    inputs: { a: 2 },
    deadlineMs: 600_000,
    revision: caseRunRevision,
    ...extra,
  };
}

const mocks: Mocks = {
  runNode,
  // The case's last node and its end (revision 12): the node as runNode does it, the end taken as written.
  runLastNode: async ({ node }) => ({ node: await runNode(node), ended: 'here' }),
  caseEnd: () => Promise.resolve(null),
  endCase: () => Promise.resolve({}),
  checkCreator: () => Promise.resolve(null),
  startChildCase: (request) =>
    Promise.resolve({
      input: {
        ...caseInput(chain({ name: 'Child one', ms: 200 }, { name: 'Child two', ms: 100 }), { callDepth: 1 }),
        caseId: request.childCaseId,
        inputs: request.inputs,
      },
      summary: 'child',
      details: 'child of Call',
    }),
  endUnstartedChildCase: () => Promise.resolve(),
  openHumanTask: () => Promise.resolve(),
  closeHumanTask: () => Promise.resolve(),
  escalateHumanTask: () => Promise.resolve(),
};

let connection: NativeConnection;
let client: Client;
let worker: Worker;
let running: Promise<void>;

beforeAll(async () => {
  connection = await NativeConnection.connect({ address: inject('temporalAddress') });
  client = new Client({ connection });
  worker = await Worker.create({
    connection,
    taskQueue,
    workflowBundle: { codePath: workflowBundlePath },
    activities: mocks,
    // Room for fewer runs than there are: the others are evicted between their tasks, and their next task replays.
    // Above the task slots, so a run is never evicted while its local activities run (they would run again).
    maxCachedWorkflows: 4,
    maxConcurrentWorkflowTaskExecutions: 2,
    shutdownGraceTime: '1s',
  });
  running = worker.run();
});

afterAll(async () => {
  worker?.shutdown();
  await running;
  await connection?.close();
});

/** One case run: what it does, and how its run ends (Temporal's status of the closed run). */
interface Scenario {
  name: string;
  input: CaseRunInput;
  ends: 'COMPLETED' | 'FAILED' | 'CANCELED';
  /** Cancel the run after this long. */
  cancelAfterMs?: number;
}

const scenarios = (): Scenario[] => [
  { name: 'chain', input: caseInput(chain({ name: 'Slow', ms: 400 }, { name: 'Fast' })), ends: 'COMPLETED' },
  { name: 'regular', input: caseInput(chain({ name: 'Long', ms: 200, regular: true })), ends: 'COMPLETED' },
  { name: 'busy', input: caseInput(chain({ name: 'Busy twice', busy: 2 })), ends: 'COMPLETED' },
  { name: 'retried', input: caseInput(chain({ name: 'Fails once', fails: 1 })), ends: 'COMPLETED' },
  { name: 'route', input: caseInput(route()), ends: 'COMPLETED' },
  { name: 'creator', input: caseInput(chain({ name: 'Checked' }), { creatorKeyId: randomUUID() }), ends: 'COMPLETED' },
  {
    name: 'deadline',
    input: caseInput(chain({ name: 'Late', ms: 1500 }, { name: 'Never' }), { deadlineMs: 1000 }),
    ends: 'FAILED',
  },
  { name: 'task', input: caseInput(personTask()), ends: 'COMPLETED' },
  { name: 'call', input: caseInput(call()), ends: 'COMPLETED' },
  {
    name: 'cancelled',
    input: caseInput(fan([{ name: 'Quick', ms: 50 }], [{ name: 'Hangs', ms: 3000 }])),
    ends: 'CANCELED',
    cancelAfterMs: 1000,
  },
  {
    name: 'busy apart',
    input: caseInput(
      fan(
        [
          { name: 'First', ms: 50 },
          { name: 'Then long', regular: true },
        ],
        [{ name: 'Later busy', ms: 400, busy: 1 }],
      ),
    ),
    ends: 'COMPLETED',
  },
  {
    name: 'retried apart',
    input: caseInput(
      fan(
        [
          { name: 'First', ms: 50 },
          { name: 'Then long', regular: true },
        ],
        [{ name: 'Later fails', ms: 400, fails: 1 }],
      ),
    ),
    ends: 'COMPLETED',
  },
  {
    name: 'many',
    input: caseInput(
      fan(
        [
          { name: 'A', ms: 100 },
          { name: 'A2', ms: 100 },
        ],
        [{ name: 'B', busy: 1 }, { name: 'B2' }],
        [
          { name: 'C', ms: 150 },
          { name: 'C2', regular: true },
        ],
        [{ name: 'D', ms: 120, fails: 1 }],
      ),
    ),
    ends: 'COMPLETED',
  },
];

/** Reads the run's progress until it closes, completing any task it waits on, as the API would. */
async function watch(handle: WorkflowHandle<CaseRun>): Promise<void> {
  let closed = false;
  const result = handle.result().finally(() => (closed = true));
  result.catch(() => undefined);
  while (!closed) {
    const progress = await handle.query(caseProgressQuery).catch(() => undefined);
    for (const task of progress?.waitingTasks ?? [])
      await handle
        .executeUpdate(completeTaskUpdate, {
          args: [{ taskId: task.taskId, outputs: { a: 1 }, actor: { via: 'api' } }],
        })
        .catch(() => undefined);
    await delay(100);
  }
}

const { EventType } = temporal.api.enums.v1;
const { WorkflowTaskFailedCause } = temporal.api.enums.v1;

describe('case runs of every node kind made now', () => {
  it('end as their nodes say, and replay from their histories', async () => {
    const all = scenarios();
    const started = await Promise.all(
      all.map(({ input }) =>
        startWorkflow(client.workflow, caseRunContract, {
          taskQueue,
          workflowId: caseWorkflowId(input.caseId),
          args: [input],
          ...runTags(true, { organizationId, workspaceId, caseStatus: 'RUNNING' }),
        }),
      ),
    );
    await Promise.all(
      started.map(async (handle, i) => {
        const after = all[i]?.cancelAfterMs;
        if (after !== undefined) void delay(after).then(() => handle.cancel());
        await watch(handle);
      }),
    );

    const closed: Record<string, string> = {};
    const problems: string[] = [];
    const runs = started.map((handle, i) => ({ name: all[i]?.name ?? '', workflowId: handle.workflowId }));
    for await (const child of client.workflow.list({
      query: `TaskQueue = "${taskQueue}" AND ParentWorkflowId IS NOT NULL`,
    }))
      runs.push({ name: 'child', workflowId: child.workflowId });
    for (const { name, workflowId } of runs) {
      const history = await client.workflow.getHandle(workflowId).fetchHistory();
      closed[name] = String(EventType[history.events?.at(-1)?.eventType ?? 0]).replace(
        'EVENT_TYPE_WORKFLOW_EXECUTION_',
        '',
      );
      for (const e of history.events ?? []) {
        const cause = e.workflowTaskFailedEventAttributes?.cause;
        // A cancel that arrives while a task is being answered refuses that answer (UnhandledCommand): not a failure.
        if (
          cause !== undefined &&
          cause !== null &&
          cause !== WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND
        )
          problems.push(`${name}: task failed, ${e.workflowTaskFailedEventAttributes?.failure?.message}`);
      }
      const dir = process.env.CASEFLOW_RECORD_HISTORIES;
      if (dir)
        writeFileSync(
          path.join(dir, `${name.replace(' ', '-')}.bin`),
          temporal.api.history.v1.History.encode(history).finish(),
        );
      await Worker.runReplayHistory({ workflowBundle: { codePath: workflowBundlePath } }, history, workflowId).catch(
        (err: unknown) => problems.push(`${name}: ${err instanceof Error ? err.message : String(err)}`),
      );
    }
    expect(problems).toEqual([]);
    expect(closed).toEqual({
      ...Object.fromEntries(all.map((s) => [s.name, s.ends])),
      child: 'COMPLETED',
    });
  }, 180_000);
});
