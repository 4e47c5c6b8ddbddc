import { sql, type ExpressionBuilder, type Kysely, type Transaction } from 'kysely';
import type { ConcurrencyLimit, QueuedCase } from '../domain/admission.js';
import type { CaseCondition, StartCaseInput } from './case-repo.js';
import { CompiledStatement } from './compiled-statement.js';
import type { Db } from './database.js';
import type { Database } from './schema.js';

const now = () => new Date().toISOString();

/** A human task still waiting on a person: its case holds no slot meanwhile. */
const openTaskStatuses = ['open', 'claimed'];

/** Cases that hold a slot: RUNNING and not waiting on a person. */
function holdingSlot(eb: ExpressionBuilder<Database, 'cases'>) {
  return eb.and([
    eb('cases.status', '=', 'RUNNING'),
    eb.not(
      eb.exists(
        eb
          .selectFrom('human_tasks')
          .select('human_tasks.id')
          .whereRef('human_tasks.case_id', '=', 'cases.id')
          .where('human_tasks.status', 'in', openTaskStatuses),
      ),
    ),
  ]);
}

/**
 * No cap applies to the case: its workflow has none, and its organization has none of its own
 * (`defaultCapped` false) or has set "no cap" over the configured default (`defaultCapped` true);
 * with `queueFirst`, also none of its organization's cases is queued (they go first, FIFO).
 */
export function uncapped(defaultCapped: boolean, queueFirst: boolean): CaseCondition {
  return (eb) => {
    const workflowCap = eb
      .selectFrom('workflows')
      .select('workflows.id')
      .whereRef('workflows.id', '=', 'cases.workflow_id')
      .where('workflows.max_concurrent_cases', 'is not', null);
    const ownLimit = eb
      .selectFrom('concurrency_limits')
      .select('concurrency_limits.organization_id')
      .whereRef('concurrency_limits.organization_id', '=', 'cases.organization_id');
    const organizationUncapped = defaultCapped
      ? eb.exists(ownLimit.where('concurrency_limits.max_concurrent_cases', 'is', null))
      : eb.not(eb.exists(ownLimit.where('concurrency_limits.max_concurrent_cases', 'is not', null)));
    const queued = eb
      .selectFrom('cases as queued')
      .select('queued.id')
      .whereRef('queued.organization_id', '=', 'cases.organization_id')
      .where('queued.status', '=', 'QUEUED');
    const conditions = [eb.not(eb.exists(workflowCap)), organizationUncapped];
    return eb.and(queueFirst ? [...conditions, eb.not(eb.exists(queued))] : conditions);
  };
}

/** Slots the organization's cases hold. */
async function heldBy(db: Kysely<Database>, organizationId: string): Promise<number> {
  const row = await db
    .selectFrom('cases')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('cases.organization_id', '=', organizationId)
    .where(holdingSlot)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** What an admission reads and writes while it holds its organization's lock. */
export class AdmissionTx {
  constructor(
    private readonly trx: Transaction<Database>,
    private readonly organizationId: string,
  ) {}

  /** PENDING → QUEUED with the run's settings; false when the case was not PENDING. */
  async enqueue(id: string, start: StartCaseInput): Promise<boolean> {
    const result = await this.trx
      .updateTable('cases')
      .set({
        status: 'QUEUED',
        inputs: JSON.stringify(start.inputs),
        callback_url: start.callbackUrl ?? null,
        deadline_ms: start.deadlineMs,
        temporal_workflow_id: start.temporalWorkflowId,
        start_at: start.startAt ?? null,
        queued_at: now(),
      })
      .where('id', '=', id)
      .where('organization_id', '=', this.organizationId)
      .where('status', '=', 'PENDING')
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /** Slots the organization's cases hold. */
  held(): Promise<number> {
    return heldBy(this.trx, this.organizationId);
  }

  /**
   * Slots the fair share counts (src/cases/admission): held by the organization's cases whose run started
   * since `since`, leaving out delayed starts still waiting for their time (a long run is mostly waiting).
   */
  async heldSince(since: string): Promise<number> {
    const row = await this.trx
      .selectFrom('cases')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('cases.organization_id', '=', this.organizationId)
      .where(holdingSlot)
      .where('cases.started_at', '>=', since)
      .where((eb) => eb.or([eb('cases.start_at', 'is', null), eb('cases.start_at', '<=', now())]))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Slots held per workflow, for the workflows named. */
  async heldByWorkflow(workflowIds: string[]): Promise<Map<string, number>> {
    if (workflowIds.length === 0) return new Map();
    const rows = await this.trx
      .selectFrom('cases')
      .select(['cases.workflow_id', (eb) => eb.fn.countAll().as('n')])
      .where('cases.workflow_id', 'in', workflowIds)
      .where(holdingSlot)
      .groupBy('cases.workflow_id')
      .execute();
    return new Map(rows.map((r) => [r.workflow_id, Number(r.n)]));
  }

  /** The organization's queue in order (oldest first) after `after`, leaving out the workflows named. */
  async queued(after: QueuedCase | undefined, limit: number, skipWorkflows: string[]): Promise<QueuedCase[]> {
    let query = this.trx
      .selectFrom('cases')
      .innerJoin('workflows', 'workflows.id', 'cases.workflow_id')
      .select(['cases.id', 'cases.workflow_id', 'cases.queued_at', 'workflows.max_concurrent_cases'])
      .where('cases.organization_id', '=', this.organizationId)
      .where('cases.status', '=', 'QUEUED');
    if (skipWorkflows.length > 0) query = query.where('cases.workflow_id', 'not in', skipWorkflows);
    if (after)
      query = query.where((eb) =>
        eb.or([
          eb('cases.queued_at', '>', after.queuedAt),
          eb.and([eb('cases.queued_at', '=', after.queuedAt), eb('cases.id', '>', after.id)]),
        ]),
      );
    const rows = await query.orderBy('cases.queued_at').orderBy('cases.id').limit(limit).execute();
    return rows.map((r) => ({
      id: r.id,
      workflowId: r.workflow_id,
      queuedAt: r.queued_at ?? '',
      workflowCap: r.max_concurrent_cases,
    }));
  }

  /** QUEUED → RUNNING: the cases take their slots; their runs are started after the commit. */
  async admit(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.trx
      .updateTable('cases')
      .set({ status: 'RUNNING', started_at: now() })
      .where('id', 'in', ids)
      .where('status', '=', 'QUEUED')
      .execute();
  }

  /** A case admitted in the request that queued it never waited: it shows no queuedAt. */
  async neverWaited(id: string): Promise<void> {
    await this.trx.updateTable('cases').set({ queued_at: null }).where('id', '=', id).execute();
  }
}

/**
 * Concurrency caps in the store: organizations' own caps, the workflows' caps, and the queue of
 * cases over a cap. Every admission of an organization writes its lock row first, so admissions
 * in any number of processes take turns (a row lock on Postgres, the write lock on SQLite) and
 * each counts what the previous one wrote.
 */
export class AdmissionRepo {
  /** What an execute reads while the fair share is engaged, compiled once (compiled-statement.ts). */
  private readonly statements = {
    caps: new CompiledStatement((db, v: { organizationId: string; workflowId: string }) =>
      db
        .selectFrom('workflows')
        .leftJoin('concurrency_limits', (join) => join.on('concurrency_limits.organization_id', '=', v.organizationId))
        .select([
          'workflows.max_concurrent_cases as workflow_cap',
          'concurrency_limits.organization_id as own_organization',
          'concurrency_limits.max_concurrent_cases as own_cap',
        ])
        .where('workflows.id', '=', v.workflowId),
    ),
    contention: new CompiledStatement((db, v: { organizationId: string; since: string }) =>
      db
        .selectFrom('cases')
        .select([
          sql<string>`count(distinct case when organization_id <> ${v.organizationId} then organization_id end)`.as(
            'others',
          ),
          sql<number>`max(case when organization_id = ${v.organizationId} and status = 'QUEUED' then 1 else 0 end)`.as(
            'queued',
          ),
        ])
        .where((eb) => eb.or([eb('started_at', '>=', v.since), eb('status', '=', 'QUEUED')])),
    ),
  };

  constructor(private readonly db: Db) {}

  async findLimit(organizationId: string): Promise<ConcurrencyLimit | undefined> {
    const r = await this.db
      .selectFrom('concurrency_limits')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .executeTakeFirst();
    return r && { organizationId, maxConcurrentCases: r.max_concurrent_cases, updatedAt: r.updated_at };
  }

  async setLimit(organizationId: string, maxConcurrentCases: number | null): Promise<void> {
    const values = { max_concurrent_cases: maxConcurrentCases, updated_at: now() };
    await this.db
      .insertInto('concurrency_limits')
      .values({ organization_id: organizationId, ...values })
      .onConflict((oc) => oc.column('organization_id').doUpdateSet(values))
      .execute();
  }

  /** The organization's own cap is dropped: the configured default applies again. */
  async clearLimit(organizationId: string): Promise<void> {
    await this.db.deleteFrom('concurrency_limits').where('organization_id', '=', organizationId).execute();
  }

  /** The workflow's own cap; null when it has none (or does not exist). */
  /**
   * The organization's own limit (undefined: none set) and the workflow's cap, in one statement:
   * every execute reads them.
   */
  async caps(
    organizationId: string,
    workflowId: string,
  ): Promise<{ own: { maxConcurrentCases: number | null } | undefined; workflowCap: number | null }> {
    const [r] = (await this.statements.caps.run(this.db, { organizationId, workflowId })).rows;
    return {
      own: r?.own_organization ? { maxConcurrentCases: r.own_cap ?? null } : undefined,
      workflowCap: r?.workflow_cap ?? null,
    };
  }

  /** Runs `fn` holding the organization's admission lock (one transaction). */
  locked<T>(organizationId: string, fn: (tx: AdmissionTx) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(async (trx) => {
      const at = now();
      await trx
        .insertInto('admission_locks')
        .values({ organization_id: organizationId, locked_at: at })
        .onConflict((oc) => oc.column('organization_id').doUpdateSet({ locked_at: at }))
        .execute();
      return fn(new AdmissionTx(trx, organizationId));
    });
  }

  /**
   * What the fair share asks on every execute, in one statement: how many other organizations are active
   * (started a case since `since`, or have one queued), and whether this one has cases queued.
   */
  async contention(organizationId: string, since: string): Promise<{ others: number; queued: boolean }> {
    const [r] = (await this.statements.contention.run(this.db, { organizationId, since })).rows;
    if (!r) throw new Error('the contention query answered no row');
    return { others: Number(r.others), queued: r.queued === 1 };
  }

  /** Organizations with cases in their queue. */
  async waitingOrganizations(): Promise<string[]> {
    const rows = await this.db
      .selectFrom('cases')
      .select('organization_id')
      .distinct()
      .where('status', '=', 'QUEUED')
      .execute();
    return rows.map((r) => r.organization_id);
  }

  async hasQueued(organizationId: string): Promise<boolean> {
    const r = await this.db
      .selectFrom('cases')
      .select('id')
      .where('organization_id', '=', organizationId)
      .where('status', '=', 'QUEUED')
      .limit(1)
      .executeTakeFirst();
    return r !== undefined;
  }

  /** Cases queued: in every queue (the gauge), or in one organization's. */
  async queuedCount(organizationId?: string): Promise<number> {
    let query = this.db
      .selectFrom('cases')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('status', '=', 'QUEUED');
    if (organizationId !== undefined) query = query.where('organization_id', '=', organizationId);
    return Number((await query.executeTakeFirstOrThrow()).n);
  }

  /** Slots the organization's cases hold now. */
  held(organizationId: string): Promise<number> {
    return heldBy(this.db, organizationId);
  }

  /** A case still waiting in its queue: QUEUED → CANCELLED (no run exists to stop). */
  async cancelQueued(id: string): Promise<boolean> {
    const result = await this.db
      .updateTable('cases')
      .set({
        status: 'CANCELLED',
        error: JSON.stringify({ message: 'Cancelled while queued, before it ran' }),
        finished_at: now(),
      })
      .where('id', '=', id)
      .where('status', '=', 'QUEUED')
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }
}
