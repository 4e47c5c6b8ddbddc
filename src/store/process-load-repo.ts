import type { Db } from './database.js';

/**
 * The event-loop utilization of the processes that run case work, one row each (src/cases/admission/case-work-load.ts).
 * Times are ISO strings of the writing process's clock, compared with the reading process's: hosts keep their
 * clocks in step (NTP), as the fair share's windows already assume.
 */
export class ProcessLoadRepo {
  constructor(private readonly db: Db) {}

  /** The process's utilization now (a row of its own, written over). */
  async report(processId: string, utilization: number, at: string): Promise<void> {
    const values = { utilization, updated_at: at };
    await this.db
      .insertInto('process_loads')
      .values({ process_id: processId, ...values })
      .onConflict((oc) => oc.column('process_id').doUpdateSet(values))
      .execute();
  }

  /** The highest utilization other processes published since `since` (0 without one). */
  async highest(since: string, except: string): Promise<number> {
    const row = await this.db
      .selectFrom('process_loads')
      .select((eb) => eb.fn.max<number | null>('utilization').as('highest'))
      .where('updated_at', '>=', since)
      .where('process_id', '!=', except)
      .executeTakeFirst();
    return row?.highest ?? 0;
  }

  /** Rows not updated since `before`: processes that died without removing theirs. */
  async prune(before: string): Promise<void> {
    await this.db.deleteFrom('process_loads').where('updated_at', '<', before).execute();
  }

  /** The process's row, on its way out. */
  async remove(processId: string): Promise<void> {
    await this.db.deleteFrom('process_loads').where('process_id', '=', processId).execute();
  }
}
