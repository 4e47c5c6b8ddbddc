import type { SelectQueryBuilder, Transaction } from 'kysely';
import type { Db } from './database.js';
import type { Database } from './schema.js';

type Trx = Transaction<Database>;

/** A bound on how many rows one owner (a workspace, an organization) holds, and how to count them. */
interface RowLimit {
  owner: { table: 'workspaces' | 'organizations'; id: string };
  max: number;
  count(trx: Trx): Promise<number>;
}

/** Tables whose rows a workspace owns and counts against a per-workspace limit. */
type WorkspaceRows = 'schedules' | 'hooks' | 'event_subscriptions';

/** At most `max` rows of `table` in the workspace. */
export function perWorkspace(table: WorkspaceRows, workspaceId: string, max: number): RowLimit {
  return rowLimit({ table: 'workspaces', id: workspaceId }, max, (trx) =>
    trx.selectFrom(table).where('workspace_id', '=', workspaceId),
  );
}

/** At most `max` bulk rerun batches of the organization RUNNING at once. */
export function runningRerunBatches(organizationId: string, max: number): RowLimit {
  return rowLimit({ table: 'organizations', id: organizationId }, max, (trx) =>
    trx.selectFrom('case_rerun_batches').where('organization_id', '=', organizationId).where('status', '=', 'RUNNING'),
  );
}

/** A COUNT(*) as the drivers give it: a number (SQLite), a string or bigint (Postgres). */
type Count = number | string | bigint;

/** A limit whose count is COUNT(*) of the rows `rows` selects. */
function rowLimit<TB extends keyof Database>(
  owner: RowLimit['owner'],
  max: number,
  rows: (trx: Trx) => SelectQueryBuilder<Database, TB, object>,
): RowLimit {
  return {
    owner,
    max,
    count: async (trx) => {
      const row = await rows(trx)
        .select((eb) => eb.fn.countAll<Count>().as('n'))
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },
  };
}

/**
 * Runs `insert` unless the owner holds `limit.max` rows already ('full': nothing written). The
 * owner's row is written first, so concurrent creations under one owner count one after another (a
 * row lock on Postgres, the write lock on SQLite) and the bound holds exactly.
 */
export async function insertWithinLimit<T>(
  db: Db,
  limit: RowLimit,
  insert: (trx: Trx) => Promise<T>,
): Promise<T | 'full'> {
  return db.transaction().execute(async (trx) => {
    await trx
      .updateTable(limit.owner.table)
      .set((eb) => ({ name: eb.ref('name') }))
      .where('id', '=', limit.owner.id)
      .execute();
    if ((await limit.count(trx)) >= limit.max) return 'full';
    return insert(trx);
  });
}
