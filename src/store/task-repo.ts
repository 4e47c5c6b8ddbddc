import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type {
  CaseTaskEvent,
  TaskActor,
  TaskAssignee,
  TaskEvent,
  TaskRecord,
  TaskStatus,
} from '../domain/human-tasks.js';
import type { VariableSchema } from '../domain/variables.js';
import type { Db } from './database.js';
import { secondsBetween } from './durations.js';
import { olderThan, pageOf, type Keyset, type ListScope } from './paging.js';
import type { Page } from '../domain/page.js';
import type { HumanTaskEventTable, HumanTaskTable } from './tables/tasks.js';

export type NewTask = Pick<
  TaskRecord,
  | 'id'
  | 'organizationId'
  | 'workspaceId'
  | 'caseId'
  | 'workflowId'
  | 'nodeId'
  | 'nodeName'
  | 'temporalWorkflowId'
  | 'title'
  | 'instructions'
  | 'form'
  | 'assignee'
  | 'dueAt'
>;

/** What a change writes besides the status: any of these columns. */
export interface TaskChange {
  status?: TaskStatus;
  assignee?: TaskAssignee;
  claimedBy?: string | null;
  dueAt?: string | null;
  escalated?: boolean;
  outputs?: Record<string, unknown>;
  decidedBy?: string | null;
  decidedVia?: TaskActor['via'];
  decidedAt?: string;
  linkHash?: string | null;
  linkExpiresAt?: string | null;
  linkKeyId?: string | null;
}

export interface TaskListFilter extends ListScope {
  statuses?: TaskStatus[];
  caseId?: string;
  workflowId?: string;
  dueBefore?: string;
  /** Tasks a user may take: assigned to them, to their role, or claimed by them. */
  assignedTo?: { userId: string; role?: string };
  sort: 'newest' | 'soonest_due';
  after?: Keyset;
  limit: number;
}

export interface TaskStatsFilter extends ListScope {
  /** Closed at or after (ISO time). */
  closedFrom: string;
  /** Closed before (ISO time). */
  closedBefore: string;
}

/** Tasks of one workspace in one status; for completed ones, the time from opening to the decision. */
export interface TaskStatsRow {
  workspaceId: string;
  status: TaskStatus;
  tasks: number;
  /** Tasks with a decision time, which the seconds below cover. */
  decided: number;
  totalSeconds: number;
  maxSeconds: number | null;
}

/** Sorts after every real time: a task without a due time comes last in the soonest-due list. */
const noDue = '9999-12-31T23:59:59.999Z';

function assigneeColumns(assignee: TaskAssignee): Pick<HumanTaskTable, 'assignee_type' | 'assignee_value'> {
  if (assignee.type === 'user') return { assignee_type: 'user', assignee_value: assignee.user_id };
  if (assignee.type === 'role') return { assignee_type: 'role', assignee_value: assignee.role };
  return { assignee_type: 'workspace', assignee_value: '' };
}

function toAssignee(row: Pick<HumanTaskTable, 'assignee_type' | 'assignee_value'>): TaskAssignee {
  if (row.assignee_type === 'user') return { type: 'user', user_id: row.assignee_value };
  if (row.assignee_type === 'role') return { type: 'role', role: row.assignee_value as 'owner' | 'admin' | 'member' };
  return { type: 'workspace' };
}

function toTask(r: HumanTaskTable): TaskRecord {
  return {
    id: r.id,
    organizationId: r.organization_id,
    workspaceId: r.workspace_id,
    caseId: r.case_id,
    workflowId: r.workflow_id,
    nodeId: r.node_id,
    nodeName: r.node_name,
    temporalWorkflowId: r.temporal_workflow_id,
    title: r.title,
    instructions: r.instructions,
    form: JSON.parse(r.form) as VariableSchema,
    assignee: toAssignee(r),
    claimedBy: r.claimed_by,
    status: r.status as TaskStatus,
    dueAt: r.due_at,
    escalated: r.escalated === 1,
    outputs: r.outputs === null ? null : (JSON.parse(r.outputs) as Record<string, unknown>),
    decidedBy: r.decided_by,
    decidedVia: r.decided_via as TaskActor['via'] | null,
    decidedAt: r.decided_at,
    linkExpiresAt: r.link_expires_at,
    linkKeyId: r.link_key_id,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function changeColumns(change: TaskChange): Partial<HumanTaskTable> {
  const row: Partial<HumanTaskTable> = {};
  if (change.status !== undefined) row.status = change.status;
  if (change.assignee !== undefined) Object.assign(row, assigneeColumns(change.assignee));
  if (change.claimedBy !== undefined) row.claimed_by = change.claimedBy;
  if (change.dueAt !== undefined) {
    row.due_at = change.dueAt;
    row.due_sort = change.dueAt ?? noDue;
  }
  if (change.escalated !== undefined) row.escalated = change.escalated ? 1 : 0;
  if (change.outputs !== undefined) row.outputs = JSON.stringify(change.outputs);
  if (change.decidedBy !== undefined) row.decided_by = change.decidedBy;
  if (change.decidedVia !== undefined) row.decided_via = change.decidedVia;
  if (change.decidedAt !== undefined) row.decided_at = change.decidedAt;
  if (change.linkHash !== undefined) row.link_hash = change.linkHash;
  if (change.linkExpiresAt !== undefined) row.link_expires_at = change.linkExpiresAt;
  if (change.linkKeyId !== undefined) row.link_key_id = change.linkKeyId;
  return row;
}

function toEvent(r: HumanTaskEventTable): TaskEvent {
  return {
    at: r.at,
    actorUserId: r.actor_user_id,
    action: r.action,
    details: JSON.parse(r.details) as Record<string, unknown>,
  };
}

/** One history entry, in the transaction of the change it records. */
async function insertEvent(trx: Db, taskId: string, at: string, event: Omit<TaskEvent, 'at'>): Promise<void> {
  await trx
    .insertInto('human_task_events')
    .values({
      id: randomUUID(),
      task_id: taskId,
      at,
      actor_user_id: event.actorUserId,
      action: event.action,
      details: JSON.stringify(event.details),
    })
    .execute();
}

/** Reads and writes human tasks and their history. */
export class TaskRepo {
  constructor(private readonly db: Db) {}

  /** Inserts the task with its `opened` event; false when it exists already (the opening activity was retried). */
  async insert(task: NewTask, event: Omit<TaskEvent, 'at'>): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const existing = await trx.selectFrom('human_tasks').select('id').where('id', '=', task.id).executeTakeFirst();
      if (existing) return false;
      const at = new Date().toISOString();
      await trx
        .insertInto('human_tasks')
        .values({
          id: task.id,
          organization_id: task.organizationId,
          workspace_id: task.workspaceId,
          case_id: task.caseId,
          workflow_id: task.workflowId,
          node_id: task.nodeId,
          node_name: task.nodeName,
          temporal_workflow_id: task.temporalWorkflowId,
          title: task.title,
          instructions: task.instructions,
          form: JSON.stringify(task.form),
          ...assigneeColumns(task.assignee),
          claimed_by: null,
          status: 'open',
          due_at: task.dueAt,
          due_sort: task.dueAt ?? noDue,
          escalated: 0,
          outputs: null,
          decided_by: null,
          decided_via: null,
          decided_at: null,
          link_hash: null,
          link_expires_at: null,
          link_key_id: null,
          created_at: at,
          updated_at: at,
        })
        .execute();
      await insertEvent(trx, task.id, at, event);
      return true;
    });
  }

  async find(id: string): Promise<TaskRecord | undefined> {
    const row = await this.db.selectFrom('human_tasks').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toTask(row);
  }

  async findByLinkHash(hash: string): Promise<TaskRecord | undefined> {
    const row = await this.db.selectFrom('human_tasks').selectAll().where('link_hash', '=', hash).executeTakeFirst();
    return row && toTask(row);
  }

  async events(taskId: string): Promise<TaskEvent[]> {
    const rows = await this.db
      .selectFrom('human_task_events')
      .selectAll()
      .where('task_id', '=', taskId)
      .orderBy('at')
      .orderBy('id')
      .execute();
    return rows.map(toEvent);
  }

  /** The history of every task of a case, oldest first, each entry with its task and node (for the case audit). */
  async caseEvents(caseId: string): Promise<CaseTaskEvent[]> {
    const rows = await this.db
      .selectFrom('human_task_events as e')
      .innerJoin('human_tasks as t', 't.id', 'e.task_id')
      .selectAll('e')
      .select(['t.node_id'])
      .where('t.case_id', '=', caseId)
      .orderBy('e.at')
      .orderBy('e.id')
      .execute();
    return rows.map((r) => ({ ...toEvent(r), taskId: r.task_id, nodeId: r.node_id }));
  }

  /**
   * Changes the task if its status is one of `from` (and, when given, its
   * claim is `claimedBy`), recording the event in the same transaction;
   * false when the task was no longer in that state (someone else was first).
   */
  async transition(
    id: string,
    from: { statuses: TaskStatus[]; claimedBy?: string | null },
    change: TaskChange,
    event: Omit<TaskEvent, 'at'>,
  ): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const at = new Date().toISOString();
      let query = trx
        .updateTable('human_tasks')
        .set({ ...changeColumns(change), updated_at: at })
        .where('id', '=', id)
        .where('status', 'in', from.statuses);
      if (from.claimedBy !== undefined)
        query =
          from.claimedBy === null
            ? query.where('claimed_by', 'is', null)
            : query.where('claimed_by', '=', from.claimedBy);
      const result = await query.executeTakeFirst();
      if (result.numUpdatedRows === 0n) return false;
      await insertEvent(trx, id, at, event);
      return true;
    });
  }

  async list(filter: TaskListFilter): Promise<Page<TaskRecord>> {
    const soonest = filter.sort === 'soonest_due';
    const rows = await pageOf(filter.limit, async (take) => {
      let query = this.db.selectFrom('human_tasks').selectAll().where('organization_id', '=', filter.organizationId);
      if (filter.workspaceIds) query = query.where('workspace_id', 'in', filter.workspaceIds);
      if (filter.statuses) query = query.where('status', 'in', filter.statuses);
      if (filter.caseId) query = query.where('case_id', '=', filter.caseId);
      if (filter.workflowId) query = query.where('workflow_id', '=', filter.workflowId);
      if (filter.dueBefore) query = query.where('due_at', '<', filter.dueBefore);
      const mine = filter.assignedTo;
      if (mine)
        query = query.where((eb) =>
          eb.or([
            eb.and([eb('assignee_type', '=', 'user'), eb('assignee_value', '=', mine.userId)]),
            eb.and([eb('assignee_type', '=', 'role'), eb('assignee_value', '=', mine.role ?? '')]),
            eb('claimed_by', '=', mine.userId),
          ]),
        );
      if (filter.after) {
        const after = filter.after;
        query = soonest
          ? query.where(sql<boolean>`(due_sort, id) > (${after.createdAt}, ${after.id})`)
          : query.where(olderThan('human_tasks', after));
      }
      const ordered = soonest
        ? query.orderBy('due_sort', 'asc').orderBy('id', 'asc')
        : query.orderBy('created_at', 'desc').orderBy('id', 'desc');
      const found = await ordered.limit(take).execute();
      // The keyset of each row in the list's own order (its due time in the soonest-due list).
      return found.map((r) => ({
        ...toTask(r),
        createdAt: soonest ? r.due_sort : r.created_at,
        created: r.created_at,
      }));
    });
    return {
      items: rows.items.map(({ created, ...task }) => ({ ...task, createdAt: created })),
      nextCursor: rows.nextCursor,
    };
  }

  /** The user's role in the organization; undefined when not a member. */
  async memberRole(organizationId: string, userId: string): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('memberships')
      .select('role')
      .where('organization_id', '=', organizationId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return row?.role;
  }

  /**
   * Per workspace and status: the tasks waiting now (open, claimed) and those that closed in the window, with
   * the time from opening to the decision of the completed ones.
   */
  async stats(filter: TaskStatsFilter): Promise<TaskStatsRow[]> {
    const seconds = secondsBetween(this.db, 'created_at', 'decided_at');
    let query = this.db
      .selectFrom('human_tasks')
      .select((eb) => [
        'workspace_id',
        'status',
        eb.fn.countAll<string | number>().as('tasks'),
        eb.fn.count<string | number>(seconds).as('decided'),
        eb.fn.sum<string | number | null>(seconds).as('total_seconds'),
        eb.fn.max<string | number | null>(seconds).as('max_seconds'),
      ])
      .where('organization_id', '=', filter.organizationId)
      .where((eb) =>
        eb.or([
          eb('status', 'in', ['open', 'claimed']),
          // A closed task changes no more: its last update is when it closed.
          eb.and([eb('updated_at', '>=', filter.closedFrom), eb('updated_at', '<', filter.closedBefore)]),
        ]),
      );
    if (filter.workspaceIds) query = query.where('workspace_id', 'in', filter.workspaceIds);
    const rows = await query.groupBy(['workspace_id', 'status']).orderBy('workspace_id').orderBy('status').execute();
    return rows.map((row) => ({
      workspaceId: row.workspace_id,
      status: row.status as TaskStatus,
      tasks: Number(row.tasks),
      decided: Number(row.decided),
      totalSeconds: Number(row.total_seconds ?? 0),
      maxSeconds: row.max_seconds === null ? null : Number(row.max_seconds),
    }));
  }

  /** Open (and claimed) tasks per workspace, for the metrics. */
  async openByWorkspace(): Promise<Array<{ workspaceId: string; open: number }>> {
    const rows = await this.db
      .selectFrom('human_tasks')
      .select((eb) => ['workspace_id', eb.fn.countAll<string | number>().as('open')])
      .where('status', 'in', ['open', 'claimed'])
      .groupBy('workspace_id')
      .execute();
    return rows.map((r) => ({ workspaceId: r.workspace_id, open: Number(r.open) }));
  }
}
