import { sql } from 'kysely';
import type { Db } from './database.js';

export interface RetentionPolicy {
  organizationId: string;
  keepDays: number | null;
  keepFailedDays: number | null;
  updatedAt: string;
}

/** What erasing cases removed: rows per table, and the bytes of their files still to remove from storage. */
export interface Erased {
  rows: number;
  storageKeys: string[];
}

/** Statuses that count as failed for the policy's second period. */
const failedStatuses = ['FAILED', 'TIMED_OUT'];

/** Retention policies, and the erasure of cases with everything that belongs only to them. */
export class RetentionRepo {
  constructor(private readonly db: Db) {}

  async findPolicy(organizationId: string): Promise<RetentionPolicy | undefined> {
    const r = await this.db
      .selectFrom('retention_policies')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .executeTakeFirst();
    return r && { organizationId, keepDays: r.keep_days, keepFailedDays: r.keep_failed_days, updatedAt: r.updated_at };
  }

  async setPolicy(organizationId: string, keepDays: number | null, keepFailedDays: number | null): Promise<void> {
    const values = { keep_days: keepDays, keep_failed_days: keepFailedDays, updated_at: new Date().toISOString() };
    await this.db
      .insertInto('retention_policies')
      .values({ organization_id: organizationId, ...values })
      .onConflict((oc) => oc.column('organization_id').doUpdateSet(values))
      .execute();
  }

  /**
   * Up to `limit` ended cases of the organization past their period: those
   * that ended before `endedBefore`, failed ones before `failedEndedBefore`
   * (null: that kind is kept).
   */
  async expiredCases(
    organizationId: string,
    endedBefore: string | null,
    failedEndedBefore: string | null,
    limit: number,
  ): Promise<string[]> {
    if (endedBefore === null && failedEndedBefore === null) return [];
    const rows = await this.db
      .selectFrom('cases')
      .select('id')
      .where('organization_id', '=', organizationId)
      .where('finished_at', 'is not', null)
      .where((eb) =>
        eb.or([
          ...(endedBefore === null
            ? []
            : [eb.and([eb('status', 'not in', failedStatuses), eb('finished_at', '<', endedBefore)])]),
          ...(failedEndedBefore === null
            ? []
            : [eb.and([eb('status', 'in', failedStatuses), eb('finished_at', '<', failedEndedBefore)])]),
        ]),
      )
      .orderBy('finished_at')
      .limit(limit)
      .execute();
    return rows.map((r) => r.id);
  }

  /**
   * Erases up to `limit` generation runs of the organization started before
   * `endedBefore` (failed ones before `failedEndedBefore`; null: that kind is
   * kept). A run lasts minutes (its time limit), so its start dates it; the
   * row is the whole run (record and tasks), so deleting it is the erasure.
   */
  async purgeGenerationRuns(
    organizationId: string,
    endedBefore: string | null,
    failedEndedBefore: string | null,
    limit: number,
  ): Promise<number> {
    if (limit <= 0 || (endedBefore === null && failedEndedBefore === null)) return 0;
    const expired = this.db
      .selectFrom('generation_runs')
      .select('id')
      .where('organization_id', '=', organizationId)
      .where((eb) =>
        eb.or([
          ...(endedBefore === null ? [] : [eb.and([eb('status', '!=', 'failed'), eb('started_at', '<', endedBefore)])]),
          ...(failedEndedBefore === null
            ? []
            : [eb.and([eb('status', '=', 'failed'), eb('started_at', '<', failedEndedBefore)])]),
        ]),
      )
      .orderBy('started_at')
      .limit(limit);
    const ids = (await expired.execute()).map((r) => r.id);
    if (ids.length === 0) return 0;
    const deleted = await this.db.deleteFrom('generation_runs').where('id', 'in', ids).executeTakeFirst();
    return Number(deleted.numDeletedRows);
  }

  /**
   * Erases the cases and what belongs only to them, in one transaction: node
   * records, callback and event deliveries with their attempts, file read
   * counters, files their nodes wrote, human tasks with their history (their
   * instructions and decisions are the case's data). Uploaded files stay
   * (others may use them).
   */
  async eraseCases(caseIds: string[]): Promise<Erased> {
    if (caseIds.length === 0) return { rows: 0, storageKeys: [] };
    return this.db.transaction().execute(async (trx) => {
      const files = await trx.selectFrom('files').select('storage_key').where('case_id', 'in', caseIds).execute();
      const deliveries = trx.selectFrom('callback_deliveries').select('id').where('case_id', 'in', caseIds);
      const tasks = trx.selectFrom('human_tasks').select('id').where('case_id', 'in', caseIds);
      const counts = [
        await trx.deleteFrom('human_task_events').where('task_id', 'in', tasks).executeTakeFirst(),
        await trx.deleteFrom('human_tasks').where('case_id', 'in', caseIds).executeTakeFirst(),
        await trx.deleteFrom('callback_attempts').where('delivery_id', 'in', deliveries).executeTakeFirst(),
        await trx.deleteFrom('callback_deliveries').where('case_id', 'in', caseIds).executeTakeFirst(),
        await trx.deleteFrom('case_nodes').where('case_id', 'in', caseIds).executeTakeFirst(),
        await trx.deleteFrom('case_file_reads').where('case_id', 'in', caseIds).executeTakeFirst(),
        await trx.deleteFrom('files').where('case_id', 'in', caseIds).executeTakeFirst(),
        await trx.deleteFrom('cases').where('id', 'in', caseIds).executeTakeFirst(),
      ];
      return {
        rows: counts.reduce((sum, r) => sum + Number(r.numDeletedRows), 0),
        storageKeys: files.map((f) => f.storage_key),
      };
    });
  }

  /**
   * SQLite only: gives freed pages back to the file system, a bounded number
   * at a time (`incremental_vacuum`, which needs auto_vacuum=INCREMENTAL:
   * see switchToIncrementalVacuum). Returns the bytes the file shrank by.
   */
  async incrementalVacuum(pages: number): Promise<number> {
    const before = await this.fileBytes();
    await sql`pragma incremental_vacuum(${sql.lit(pages)})`.execute(this.db);
    return before - (await this.fileBytes());
  }

  /**
   * SQLite only: whether the database frees pages incrementally; a database
   * created before that mode was set needs one full VACUUM to switch (it
   * rewrites the file, so it runs once, from the retention workflow).
   */
  async switchToIncrementalVacuum(): Promise<boolean> {
    const mode = await sql<{ auto_vacuum: number }>`pragma auto_vacuum`.execute(this.db);
    if (mode.rows[0]?.auto_vacuum === 2) return false;
    await sql`pragma auto_vacuum = incremental`.execute(this.db);
    await sql`vacuum`.execute(this.db);
    return true;
  }

  private async fileBytes(): Promise<number> {
    const count = await sql<{ page_count: number }>`pragma page_count`.execute(this.db);
    const size = await sql<{ page_size: number }>`pragma page_size`.execute(this.db);
    return (count.rows[0]?.page_count ?? 0) * (size.rows[0]?.page_size ?? 0);
  }
}
