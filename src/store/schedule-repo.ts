import { randomUUID } from 'node:crypto';
import type { Insertable, Selectable, Updateable } from 'kysely';
import type { FiringRecord, OverlapPolicy, ScheduleRecord, ScheduleTiming } from '../domain/schedules.js';
import type { Db } from './database.js';
import { olderThan, pageOf, type Keyset, type ListScope } from './paging.js';
import type { Page } from '../domain/page.js';
import type { ScheduleFiringTable, ScheduleTable } from './tables/schedules.js';
import { insertWithinLimit, perWorkspace } from './row-limits.js';

export type NewSchedule = Omit<ScheduleRecord, 'id' | 'createdAt' | 'updatedAt'>;
/** What PATCH may change: everything but the workflow and the owner. */
export type ScheduleChanges = Partial<
  Pick<
    ScheduleRecord,
    | 'workflowVersionId'
    | 'title'
    | 'timing'
    | 'inputs'
    | 'callbackUrl'
    | 'overlap'
    | 'catchupWindowMs'
    | 'paused'
    | 'createdByKeyId'
    | 'createdByUserId'
  >
>;

export interface ScheduleListFilter extends ListScope {
  workflowId?: string;
  after?: Keyset;
  limit: number;
}

const now = () => new Date().toISOString();

function toSchedule(r: Selectable<ScheduleTable>): ScheduleRecord {
  return {
    id: r.id,
    organizationId: r.organization_id,
    workspaceId: r.workspace_id,
    workflowId: r.workflow_id,
    workflowVersionId: r.workflow_version_id,
    title: r.title,
    timing: JSON.parse(r.spec) as ScheduleTiming,
    inputs: JSON.parse(r.inputs) as Record<string, unknown>,
    callbackUrl: r.callback_url,
    overlap: r.overlap as OverlapPolicy,
    catchupWindowMs: r.catchup_window_ms,
    paused: r.paused === 1,
    createdByKeyId: r.created_by_key_id,
    createdByUserId: r.created_by_user_id,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function columns(s: ScheduleChanges): Updateable<ScheduleTable> {
  return {
    ...(s.workflowVersionId !== undefined ? { workflow_version_id: s.workflowVersionId } : {}),
    ...(s.title !== undefined ? { title: s.title } : {}),
    ...(s.timing !== undefined ? { spec: JSON.stringify(s.timing) } : {}),
    ...(s.inputs !== undefined ? { inputs: JSON.stringify(s.inputs) } : {}),
    ...(s.callbackUrl !== undefined ? { callback_url: s.callbackUrl } : {}),
    ...(s.overlap !== undefined ? { overlap: s.overlap } : {}),
    ...(s.catchupWindowMs !== undefined ? { catchup_window_ms: s.catchupWindowMs } : {}),
    ...(s.paused !== undefined ? { paused: s.paused ? 1 : 0 } : {}),
    ...(s.createdByKeyId !== undefined ? { created_by_key_id: s.createdByKeyId } : {}),
    ...(s.createdByUserId !== undefined ? { created_by_user_id: s.createdByUserId } : {}),
  };
}

/** Schedules and their firings. */
export class ScheduleRepo {
  constructor(private readonly db: Db) {}

  /** A new schedule, unless its workspace holds `maxPerWorkspace` already ('full': nothing written). */
  async create(input: NewSchedule, maxPerWorkspace: number): Promise<ScheduleRecord | 'full'> {
    const at = now();
    const row: Insertable<ScheduleTable> = {
      id: randomUUID(),
      organization_id: input.organizationId,
      workspace_id: input.workspaceId,
      workflow_id: input.workflowId,
      workflow_version_id: input.workflowVersionId,
      title: input.title,
      spec: JSON.stringify(input.timing),
      inputs: JSON.stringify(input.inputs),
      callback_url: input.callbackUrl,
      overlap: input.overlap,
      catchup_window_ms: input.catchupWindowMs,
      paused: input.paused ? 1 : 0,
      created_by_key_id: input.createdByKeyId,
      created_by_user_id: input.createdByUserId,
      created_at: at,
      updated_at: at,
    };
    return insertWithinLimit(this.db, perWorkspace('schedules', input.workspaceId, maxPerWorkspace), async (trx) => {
      await trx.insertInto('schedules').values(row).execute();
      return toSchedule(row as Selectable<ScheduleTable>);
    });
  }

  async find(id: string): Promise<ScheduleRecord | undefined> {
    const r = await this.db.selectFrom('schedules').selectAll().where('id', '=', id).executeTakeFirst();
    return r && toSchedule(r);
  }

  async list(filter: ScheduleListFilter): Promise<Page<ScheduleRecord>> {
    return pageOf(filter.limit, async (take) => {
      let query = this.db.selectFrom('schedules').selectAll().where('organization_id', '=', filter.organizationId);
      if (filter.workspaceIds) query = query.where('workspace_id', 'in', filter.workspaceIds);
      if (filter.workflowId) query = query.where('workflow_id', '=', filter.workflowId);
      if (filter.after) query = query.where(olderThan('schedules', filter.after));
      const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(take).execute();
      return rows.map(toSchedule);
    });
  }

  async update(id: string, changes: ScheduleChanges): Promise<ScheduleRecord | undefined> {
    const r = await this.db
      .updateTable('schedules')
      .set({ ...columns(changes), updated_at: now() })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    return r && toSchedule(r);
  }

  async delete(id: string): Promise<void> {
    await this.db.deleteFrom('schedule_firings').where('schedule_id', '=', id).execute();
    await this.db.deleteFrom('schedules').where('id', '=', id).execute();
  }

  /**
   * Records a firing once per Temporal workflow: a retried activity finds the
   * row its first attempt wrote and gets it back instead of a second one.
   */
  async recordFiring(input: {
    scheduleId: string;
    temporalWorkflowId: string;
    scheduledAt: string;
    status: 'started' | 'failed';
    caseId?: string;
    error?: string;
  }): Promise<void> {
    const row: Insertable<ScheduleFiringTable> = {
      id: randomUUID(),
      schedule_id: input.scheduleId,
      temporal_workflow_id: input.temporalWorkflowId,
      scheduled_at: input.scheduledAt,
      status: input.status,
      case_id: input.caseId ?? null,
      error: input.error ?? null,
      created_at: now(),
    };
    await this.db
      .insertInto('schedule_firings')
      .values(row)
      .onConflict((oc) => oc.column('temporal_workflow_id').doNothing())
      .execute();
  }

  async findFiring(temporalWorkflowId: string): Promise<FiringRecord | undefined> {
    const rows = await this.firings().where('f.temporal_workflow_id', '=', temporalWorkflowId).execute();
    return rows[0] && toFiring(rows[0]);
  }

  /** The schedule's latest firings, newest first, with each case's status now. */
  async recentFirings(scheduleId: string, limit: number): Promise<FiringRecord[]> {
    const rows = await this.firings()
      .where('f.schedule_id', '=', scheduleId)
      .orderBy('f.created_at', 'desc')
      .orderBy('f.id', 'desc')
      .limit(limit)
      .execute();
    return rows.map(toFiring);
  }

  private firings() {
    return this.db
      .selectFrom('schedule_firings as f')
      .leftJoin('cases as c', 'c.id', 'f.case_id')
      .selectAll('f')
      .select('c.status as case_status');
  }
}

function toFiring(r: Selectable<ScheduleFiringTable> & { case_status: string | null }): FiringRecord {
  return {
    id: r.id,
    scheduleId: r.schedule_id,
    temporalWorkflowId: r.temporal_workflow_id,
    scheduledAt: r.scheduled_at,
    status: r.status as FiringRecord['status'],
    caseId: r.case_id,
    caseStatus: r.case_status,
    error: r.error,
    createdAt: r.created_at,
  };
}
