import { sql, type Selectable } from 'kysely';
import { activeRunStatuses, type GenerationRunRecord } from '../domain/generation/run.js';
import type { Db } from './database.js';
import type { GenerationRunTable } from './tables/generation.js';

export interface StoredRun {
  id: string;
  workflowId: string;
  organizationId: string;
  workspaceId: string;
  status: string;
  finalized: boolean;
  record: GenerationRunRecord;
}

function toRun(r: Selectable<GenerationRunTable>): StoredRun {
  const record = JSON.parse(r.record) as GenerationRunRecord;
  // The status column wins: a caller's cancel is written there before the workflow's last record.
  return {
    id: r.id,
    workflowId: r.workflow_id,
    organizationId: r.organization_id,
    workspaceId: r.workspace_id,
    status: r.status,
    finalized: r.finalized === 1,
    record: { ...record, status: r.status as GenerationRunRecord['status'] },
  };
}

/** Generation run records. */
export class GenerationRepo {
  constructor(private readonly db: Db) {}

  async insert(run: {
    organizationId: string;
    workspaceId: string;
    createdBy: string;
    record: GenerationRunRecord;
  }): Promise<void> {
    await this.db
      .insertInto('generation_runs')
      .values({
        id: run.record.run_id,
        workflow_id: run.record.workflow_id,
        organization_id: run.organizationId,
        workspace_id: run.workspaceId,
        status: run.record.status,
        record: JSON.stringify(run.record),
        created_by: run.createdBy,
        started_at: run.record.started_at,
        finalized: 0,
      })
      .execute();
  }

  /** Removes a run whose workflow never started (the start conflicted or failed). */
  async delete(runId: string): Promise<void> {
    await this.db.deleteFrom('generation_runs').where('id', '=', runId).where('finalized', '=', 0).execute();
  }

  async find(workflowId: string, runId: string): Promise<StoredRun | undefined> {
    const r = await this.db
      .selectFrom('generation_runs')
      .selectAll()
      .where('id', '=', runId)
      .where('workflow_id', '=', workflowId)
      .executeTakeFirst();
    return r && toRun(r);
  }

  /** The workflow's most recent run. */
  async latest(workflowId: string): Promise<StoredRun | undefined> {
    const r = await this.db
      .selectFrom('generation_runs')
      .selectAll()
      .where('workflow_id', '=', workflowId)
      .orderBy('started_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    return r && toRun(r);
  }

  async active(workflowId: string): Promise<StoredRun | undefined> {
    const r = await this.db
      .selectFrom('generation_runs')
      .selectAll()
      .where('workflow_id', '=', workflowId)
      .where('status', 'in', [...activeRunStatuses])
      .orderBy('started_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    return r && toRun(r);
  }

  /**
   * Marks an active run cancelled; false when it is not active any more, so
   * of two cancels only the first succeeds. The workflow is signalled after.
   */
  async markCancelled(runId: string): Promise<boolean> {
    const result = await this.db
      .updateTable('generation_runs')
      .set({ status: 'cancelled' })
      .where('id', '=', runId)
      .where('status', 'in', [...activeRunStatuses])
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /**
   * The workflow's record. Progress writes never undo a caller's cancel
   * (status stays cancelled); the final write closes the row for good.
   */
  async save(record: GenerationRunRecord, final: boolean): Promise<void> {
    await this.db
      .updateTable('generation_runs')
      .set({
        record: JSON.stringify(record),
        status: sql<string>`case when status = 'cancelled' then 'cancelled' else ${record.status} end`,
        finalized: final ? 1 : 0,
      })
      .where('id', '=', record.run_id)
      .where('finalized', '=', 0)
      .execute();
  }
}
