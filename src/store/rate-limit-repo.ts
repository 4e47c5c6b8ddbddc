import { sql } from 'kysely';
import type { Db } from './database.js';

/** One fixed window of one counter: at most `limit` hits under `bucket` in the window starting at `windowStart`. */
export interface CounterWindow {
  bucket: string;
  windowStart: number;
  /** When the window ends (epoch ms); the row may be pruned after. */
  expiresAt: number;
  limit: number;
}

/** Each window's count with this hit; `counted` false when one of them would have passed its limit. */
export interface HitResult {
  counted: boolean;
  hits: number[];
}

/** Request counters in fixed windows (rate_limit_windows), shared by every API process. */
export class RateLimitRepo {
  constructor(private readonly db: Db) {}

  /**
   * Counts one hit in every window with one multi-row UPSERT (atomic on SQLite and Postgres, so
   * concurrent processes never both take a last unit), and takes it back with one UPDATE when a window
   * went over its limit: a refused hit counts in none of its windows. Between the two, a concurrent
   * request may see the refused hit and be refused too; the limit errs on the side of refusing, and no
   * transaction is held open across an await (a SQLite writer in another process would wait on it).
   * Buckets must be distinct; callers list windows in one order, so Postgres locks rows in one order.
   */
  async hit(windows: readonly CounterWindow[]): Promise<HitResult> {
    const rows = await this.db
      .insertInto('rate_limit_windows')
      .values(windows.map((w) => ({ bucket: w.bucket, window_start: w.windowStart, hits: 1, expires_at: w.expiresAt })))
      .onConflict((oc) =>
        oc.columns(['bucket', 'window_start']).doUpdateSet({ hits: sql<number>`rate_limit_windows.hits + 1` }),
      )
      .returning(['bucket', 'hits'])
      .execute();
    const counts = new Map(rows.map((row) => [row.bucket, row.hits]));
    const hits = windows.map((w) => counts.get(w.bucket) ?? 0);
    if (windows.every((w, i) => (hits[i] ?? 0) <= w.limit)) return { counted: true, hits };
    await this.db
      .updateTable('rate_limit_windows')
      .set({ hits: sql<number>`hits - 1` })
      .where((eb) =>
        eb.or(windows.map((w) => eb.and([eb('bucket', '=', w.bucket), eb('window_start', '=', w.windowStart)]))),
      )
      .execute();
    return { counted: false, hits };
  }

  /** Drops the windows that ended before `now`. */
  async prune(now: number): Promise<void> {
    await this.db.deleteFrom('rate_limit_windows').where('expires_at', '<', now).execute();
  }
}
