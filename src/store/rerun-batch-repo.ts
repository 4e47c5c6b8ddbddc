import type { Insertable, Selectable } from 'kysely';
import {
  caseStatuses,
  rerunBatchStatuses,
  rerunFroms,
  rerunOutcomes,
  rerunVersions,
  type CaseStatus,
  type RerunBatchStatus,
  type RerunFrom,
  type RerunOutcome,
  type RerunVersion,
} from '../domain/cases.js';
import type { Db } from './database.js';
import { insertWithinLimit, runningRerunBatches } from './row-limits.js';
import type { CaseRerunBatchTable, CaseRerunItemTable } from './tables/cases.js';

/** The cases a batch reruns: the case list's filters, `createdBefore` bounded by the batch's creation. */
export interface RerunFilter {
  workspaceId?: string;
  workflowId?: string;
  status?: CaseStatus;
  createdFrom?: string;
  createdBefore: string;
}

export interface RerunBatchRecord {
  id: string;
  organizationId: string;
  /** The workspaces the creating key reached with Case: Full; null: the whole organization. */
  workspaceIds: string[] | null;
  filter: RerunFilter;
  from: RerunFrom;
  version: RerunVersion;
  status: RerunBatchStatus;
  matched: number;
  createdByKeyId: string;
  createdAt: string;
  finishedAt: string | null;
  error: string | null;
  temporalWorkflowId: string;
}

export type CreateRerunBatch = Omit<RerunBatchRecord, 'status' | 'createdAt' | 'finishedAt' | 'error'>;

/** One original case's outcome in a batch. */
export interface RerunItem {
  caseId: string;
  outcome: RerunOutcome;
  reason: string | null;
  rerunCaseId: string | null;
  at: string;
}

function toBatch(r: Selectable<CaseRerunBatchTable>): RerunBatchRecord {
  const filter = JSON.parse(r.filter) as RerunFilter;
  return {
    id: r.id,
    organizationId: r.organization_id,
    workspaceIds: r.workspace_ids === null ? null : (JSON.parse(r.workspace_ids) as string[]),
    filter: { ...filter, status: caseStatuses.find((s) => s === filter.status) },
    from: rerunFroms.find((f) => f === r.rerun_from) ?? 'start',
    version: rerunVersions.find((v) => v === r.version) ?? 'original',
    status: rerunBatchStatuses.find((s) => s === r.status) ?? 'RUNNING',
    matched: r.matched,
    createdByKeyId: r.created_by_key_id,
    createdAt: r.created_at,
    finishedAt: r.finished_at,
    error: r.error,
    temporalWorkflowId: r.temporal_workflow_id,
  };
}

function toItem(r: Selectable<CaseRerunItemTable>): RerunItem {
  return {
    caseId: r.case_id,
    outcome: rerunOutcomes.find((o) => o === r.outcome) ?? 'failed',
    reason: r.reason,
    rerunCaseId: r.rerun_case_id,
    at: r.at,
  };
}

/** Bulk rerun batches and the outcome of each case they went through (one per case: recorded once). */
export class RerunBatchRepo {
  constructor(private readonly db: Db) {}

  /**
   * A new batch, RUNNING, unless its organization has `maxRunning` batches RUNNING already ('full':
   * nothing written).
   */
  async create(input: CreateRerunBatch, maxRunning: number): Promise<RerunBatchRecord | 'full'> {
    const row: Insertable<CaseRerunBatchTable> = {
      id: input.id,
      organization_id: input.organizationId,
      workspace_ids: input.workspaceIds === null ? null : JSON.stringify(input.workspaceIds),
      filter: JSON.stringify(input.filter),
      rerun_from: input.from,
      version: input.version,
      status: 'RUNNING',
      matched: input.matched,
      created_by_key_id: input.createdByKeyId,
      created_at: new Date().toISOString(),
      finished_at: null,
      error: null,
      temporal_workflow_id: input.temporalWorkflowId,
    };
    return insertWithinLimit(this.db, runningRerunBatches(input.organizationId, maxRunning), async (trx) => {
      await trx.insertInto('case_rerun_batches').values(row).execute();
      return toBatch(row as Selectable<CaseRerunBatchTable>);
    });
  }

  async find(id: string): Promise<RerunBatchRecord | undefined> {
    const r = await this.db.selectFrom('case_rerun_batches').selectAll().where('id', '=', id).executeTakeFirst();
    return r && toBatch(r);
  }

  /** RUNNING → an end, once; false when the batch had ended already. */
  async finish(id: string, status: Exclude<RerunBatchStatus, 'RUNNING'>, error?: string): Promise<boolean> {
    const result = await this.db
      .updateTable('case_rerun_batches')
      .set({ status, error: error ?? null, finished_at: new Date().toISOString() })
      .where('id', '=', id)
      .where('status', '=', 'RUNNING')
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /** Records a case's outcome; a second record of the same case in the batch is ignored. */
  async record(batchId: string, item: Omit<RerunItem, 'at'>): Promise<void> {
    await this.db
      .insertInto('case_rerun_items')
      .values({
        batch_id: batchId,
        case_id: item.caseId,
        outcome: item.outcome,
        reason: item.reason,
        rerun_case_id: item.rerunCaseId,
        at: new Date().toISOString(),
      })
      .onConflict((oc) => oc.columns(['batch_id', 'case_id']).doNothing())
      .execute();
  }

  /** The cases of `caseIds` the batch has an outcome for. */
  async recorded(batchId: string, caseIds: string[]): Promise<Set<string>> {
    if (caseIds.length === 0) return new Set();
    const rows = await this.db
      .selectFrom('case_rerun_items')
      .select('case_id')
      .where('batch_id', '=', batchId)
      .where('case_id', 'in', caseIds)
      .execute();
    return new Set(rows.map((r) => r.case_id));
  }

  /** How many cases ended in each outcome. */
  async counts(batchId: string): Promise<Record<RerunOutcome, number>> {
    const rows = await this.db
      .selectFrom('case_rerun_items')
      .select((eb) => ['outcome', eb.fn.countAll<string | number>().as('n')])
      .where('batch_id', '=', batchId)
      .groupBy('outcome')
      .execute();
    const counts: Record<RerunOutcome, number> = { started: 0, skipped: 0, failed: 0 };
    for (const row of rows) {
      const outcome = rerunOutcomes.find((o) => o === row.outcome);
      if (outcome) counts[outcome] = Number(row.n);
    }
    return counts;
  }

  /** The first `limit` items of an outcome, in the order they were recorded. */
  async items(batchId: string, outcome: RerunOutcome, limit: number): Promise<RerunItem[]> {
    const rows = await this.db
      .selectFrom('case_rerun_items')
      .selectAll()
      .where('batch_id', '=', batchId)
      .where('outcome', '=', outcome)
      .orderBy('at')
      .orderBy('case_id')
      .limit(limit)
      .execute();
    return rows.map(toItem);
  }
}
