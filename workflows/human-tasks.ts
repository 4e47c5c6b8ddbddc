import {
  ApplicationFailure,
  CancellationScope,
  condition,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { TaskActivities } from '../activities/tasks.js';
import { routeVariableName } from '../src/domain/case-graph.js';
import type { NodeCompletion } from '../src/domain/case-scheduler.js';
import type { CaseRunInput, NodeLog } from '../src/domain/cases.js';
import type { WorkflowNode } from '../src/domain/graph.js';
import {
  assigneeKey,
  type CloseTaskInput,
  defaultMaxWaitMs,
  taskRefusedType,
  type PersonWait,
  type TaskAssignee,
  type TaskDecision,
  type TaskRefusal,
  type WaitingTask,
} from '../src/domain/human-tasks.js';
import { NodeFailure, type ChangeInForce, type WaitingNodeKind } from '../src/domain/node-kinds/kind.js';
import { completeTaskUpdate } from '../src/temporal/contracts/case-run.js';

/** The task's row: retried for as long as the store is away (a task must open and close, however late). */
const { openHumanTask, closeHumanTask, escalateHumanTask } = proxyActivities<TaskActivities>({
  summary: 'Human task',
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', maximumInterval: '1 minute' },
});

interface Task {
  id: string;
  nodeId: string;
  wait: PersonWait;
  state: 'open' | 'completed' | 'expired' | 'cancelled';
  /** Current assignee and due time (escalation changes both). */
  assignee: TaskAssignee;
  dueAt?: number;
  escalated: boolean;
  decision?: TaskDecision;
  /** Its row says how it ended (the Update's answer waits for this). */
  closed: boolean;
}

function refuse(reason: TaskRefusal, message: string): never {
  throw ApplicationFailure.create({ type: taskRefusedType, message, details: [reason], nonRetryable: true });
}

function info(message: string): NodeLog {
  return { level: 'info', message, at: new Date().toISOString() };
}

/** A due action's route: that route's bool true, the node's other routes false. */
function routeOutputs(node: WorkflowNode, chosen: string): Record<string, unknown> {
  const outputs: Record<string, unknown> = {};
  for (const routeId of Object.keys(node.routes ?? {})) outputs[routeVariableName(node, routeId)] = routeId === chosen;
  return outputs;
}

/**
 * The case's waits on people (human_task nodes): each opens a task row, then
 * waits durably for the completeTask Update or the due timer, whichever the
 * workflow sees first (one winner: the validator refuses a task that is no
 * longer open or is past due). Time with a task open is counted, so the
 * case deadline leaves it out and the case's maximum wait bounds it.
 */
export class PersonWaits {
  private readonly tasks = new Map<string, Task>();
  private openCount = 0;
  private waitedBefore = 0;
  private openSince = 0;

  constructor(
    private readonly input: CaseRunInput,
    /** Whether a change of the run's commands applies to this run (the case run's changeInForce). */
    private readonly inForce: ChangeInForce,
  ) {
    setHandler(completeTaskUpdate, (decision) => this.decide(decision), {
      validator: (d: TaskDecision) => this.check(d),
    });
  }

  /** How long the case has had at least one task open. */
  waitedMs(): number {
    return this.waitedBefore + (this.openCount > 0 ? Date.now() - this.openSince : 0);
  }

  anyOpen(): boolean {
    return this.openCount > 0;
  }

  /** The open tasks, for the case status. */
  waiting(): WaitingTask[] {
    return [...this.tasks.values()]
      .filter((t) => t.state === 'open')
      .map((t) => ({
        taskId: t.id,
        nodeId: t.nodeId,
        title: t.wait.title,
        ...(t.dueAt !== undefined ? { dueAt: new Date(t.dueAt).toISOString() } : {}),
      }));
  }

  /** The validator: synchronous, so a refused completion writes nothing to history. */
  private check(decision: TaskDecision): void {
    const task = this.tasks.get(decision.taskId);
    if (!task) refuse('unknown', `Task ${decision.taskId} is not waiting in this case`);
    if (task.state !== 'open') refuse(task.state, `Task ${task.id} is ${task.state} already`);
    if (task.dueAt !== undefined && Date.now() >= task.dueAt)
      refuse('expired', `Task ${task.id} was due at ${new Date(task.dueAt).toISOString()}`);
    if (decision.asAssignee !== undefined && decision.asAssignee !== assigneeKey(task.assignee))
      refuse('unauthorized', `Task ${task.id} is no longer assigned to ${decision.asAssignee}`);
  }

  private async decide(decision: TaskDecision): Promise<null> {
    // Checked again: two updates of one workflow task are validated before either handler runs.
    this.check(decision);
    const task = this.tasks.get(decision.taskId) as Task;
    task.state = 'completed';
    task.decision = decision;
    await condition(() => task.closed);
    return null;
  }

  /** One human_task node: the task opened, then its outcome (the decision, or what its due time says). */
  async run(
    kind: WaitingNodeKind,
    node: WorkflowNode,
    inputs: Record<string, unknown>,
    onWaiting: (waiting: boolean) => void,
  ): Promise<NodeCompletion> {
    const { caseId, organizationId, workspaceId } = this.input;
    const context = { caseId, organizationId, workspaceId, node, process: node.process ?? {}, inputs };
    const wait = kind.prepare({ ...context, caseInputs: this.input.inputs, attempt: 1 }, Date.now(), this.inForce);
    const task: Task = {
      id: uuid4(),
      nodeId: node.id,
      wait,
      state: 'open',
      assignee: wait.assignee,
      ...(wait.dueAt !== undefined ? { dueAt: wait.dueAt } : {}),
      escalated: false,
      closed: false,
    };
    this.tasks.set(task.id, task);
    this.opened();
    onWaiting(true);
    try {
      const temporalWorkflowId = workflowInfo().workflowId;
      await openHumanTask({
        taskId: task.id,
        caseId,
        organizationId,
        workspaceId,
        nodeId: node.id,
        nodeName: node.name,
        temporalWorkflowId,
        wait,
      });
      return await this.outcome(task, node);
    } catch (err) {
      // Cancelled (the case ended) while open: the row says so too.
      if (task.state === 'open') {
        task.state = 'cancelled';
        await this.close(task, { status: 'cancelled', reason: 'The case ended before the task was completed' });
      }
      throw err;
    } finally {
      this.closedOne();
      onWaiting(false);
    }
  }

  private async outcome(task: Task, node: WorkflowNode): Promise<NodeCompletion> {
    const maxWaitMs = this.input.maxWaitMs ?? defaultMaxWaitMs;
    for (;;) {
      const untilMax = maxWaitMs - this.waitedMs();
      const untilDue = task.dueAt === undefined ? Infinity : task.dueAt - Date.now();
      const timeout = Math.max(Math.min(untilMax, untilDue), 1);
      const summary = `Waiting for task "${task.wait.title}"`;
      if (await condition(() => task.state !== 'open', timeout, { summary })) break;
      if (untilMax < untilDue) {
        task.state = 'expired';
        await this.close(task, {
          status: 'expired',
          reason: `The case waited its maximum of ${maxWaitMs} ms on people`,
        });
        throw new NodeFailure(`The case waited its maximum of ${maxWaitMs} ms on people (cases.maxWaitMs)`, {
          kind: 'timeout',
          retryable: false,
        });
      }
      const onDue = task.wait.onDue;
      if (onDue.action === 'escalate' && !task.escalated) {
        task.escalated = true;
        task.assignee = onDue.assignee;
        task.dueAt = onDue.due_after_ms === undefined ? undefined : Date.now() + onDue.due_after_ms;
        await escalateHumanTask({
          taskId: task.id,
          assignee: task.assignee,
          ...(task.dueAt !== undefined ? { dueAt: task.dueAt } : {}),
        });
        continue;
      }
      task.state = 'expired';
      const due = `Task "${task.wait.title}" was due at ${new Date(task.dueAt ?? Date.now()).toISOString()}`;
      await this.close(task, { status: 'expired', reason: due });
      if (onDue.action === 'route')
        return { outputs: routeOutputs(node, onDue.route_id), logs: [info(`${due}: took route ${onDue.route_id}`)] };
      throw new NodeFailure(`${due} and was not completed`, { kind: 'due', retryable: false });
    }
    const decision = task.decision as TaskDecision;
    await this.close(task, { status: 'completed', outputs: decision.outputs, actor: decision.actor });
    const who = decision.actor.userId ? `user ${decision.actor.userId}` : 'a completion link';
    return { outputs: decision.outputs, logs: [info(`Task ${task.id} completed by ${who} via ${decision.actor.via}`)] };
  }

  /** Closes the row whatever happens to the case meanwhile (a cancel must not leave it open). */
  private async close(task: Task, end: Omit<CloseTaskInput, 'taskId'>): Promise<void> {
    await CancellationScope.nonCancellable(() => closeHumanTask({ taskId: task.id, ...end }));
    task.closed = true;
  }

  private opened(): void {
    if (this.openCount === 0) this.openSince = Date.now();
    this.openCount += 1;
    this.showDetails();
  }

  private closedOne(): void {
    this.openCount -= 1;
    if (this.openCount === 0) this.waitedBefore += Date.now() - this.openSince;
    this.showDetails();
  }

  /** The Temporal UI's current details: which tasks the case waits for. */
  private showDetails(): void {
    const open = this.waiting();
    setCurrentDetails(
      open.length === 0 ? '' : `Waiting for ${open.map((t) => `task ${t.taskId} "${t.title}"`).join(', ')}`,
    );
  }
}

/**
 * The case deadline on the time the case is not waiting on people: the timer
 * sleeps what is left, and while a task is open it waits for none to be.
 * With no wait it is one timer of the deadline, as before human tasks.
 */
export async function activeDeadline(deadlineMs: number, startedAt: number, waits: PersonWaits): Promise<void> {
  for (;;) {
    if (waits.anyOpen()) {
      await condition(() => !waits.anyOpen());
      continue;
    }
    const left = deadlineMs - (Date.now() - startedAt - waits.waitedMs());
    if (left <= 0) return;
    await sleep(left);
  }
}
