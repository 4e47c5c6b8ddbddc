import { randomUUID } from 'node:crypto';
import { type ExpressionBuilder, type ExpressionWrapper, type Insertable, type Selectable, type SqlBool } from 'kysely';
import {
  nodeClocks,
  maxCallDepthBound,
  terminalStatuses,
  type CaseError,
  type CaseResults,
  type CaseStatus,
  type FinalizeCaseInput,
  type NodeRecord,
  rerunFroms,
  type RerunFrom,
  type ReusedFrom,
} from '../domain/cases.js';
import { pendingDeliveryRow, type NewDelivery } from './callback-repo.js';
import type { Db } from './database.js';
import { CompiledRows } from './compiled-rows.js';
import { CompiledStatement } from './compiled-statement.js';
import { secondsBetween } from './durations.js';
import type { Database } from './schema.js';
import { olderThan, pageOf, type Keyset, type ListScope } from './paging.js';
import type { Page } from '../domain/page.js';
import type { CaseParent, CaseRecord, CaseSummary } from '../domain/case-records.js';
import type { CaseNodeTable, CaseTable } from './tables/cases.js';
import type { CallbackDeliveryTable } from './tables/callbacks.js';

/** What finalizing a case read back of it, for the metrics. */
export type FinishedCase = Pick<
  CaseRecord,
  'organizationId' | 'workspaceId' | 'workflowId' | 'startedAt' | 'finishedAt'
>;

/**
 * What the case end's transaction writes besides the case: the deliveries its end owes subscribers (an
 * outbox). Computed from what the end's own statement read back, without I/O: SQLite has one connection,
 * held by the transaction.
 */
export type CaseEndOutbox = (finished: FinishedCase) => NewDelivery[];

/** A condition on a case's row that a write also requires (e.g. admission's "no cap applies"). */
export type CaseCondition = (eb: ExpressionBuilder<Database, 'cases'>) => ExpressionWrapper<Database, 'cases', SqlBool>;

/** What a new case is given: the record's own fields, with the optional ones left out rather than null. */
export interface CreateCaseInput extends Pick<
  CaseRecord,
  | 'organizationId'
  | 'workspaceId'
  | 'workflowId'
  | 'entityId'
  | 'workflowVersionId'
  | 'workflowVersionNumber'
  | 'source'
  | 'initialInput'
  | 'createdByKeyId'
  | 'createdByUserId'
> {
  title?: string;
  description?: string;
  refUserId?: string;
  webAppId?: string;
  hookId?: string;
  workspaces?: string;
  scheduleId?: string;
  /** A given id (a bulk rerun's, derived from its batch and original); a new UUID otherwise. */
  id?: string;
  rerunOf?: string;
  rerunFrom?: RerunFrom;
}

export interface CaseStatsFilter extends ListScope {
  workflowId?: string;
  /** Created at or after (ISO time). */
  createdFrom: string;
  /** Created before (ISO time). */
  createdBefore: string;
}

/** Cases of one workflow in one status, and the run time of those that ran to an end. */
export interface CaseStatsRow {
  workflowId: string;
  workspaceId: string;
  status: CaseStatus;
  cases: number;
  /** Cases with both a start and an end, which the seconds below cover. */
  timed: number;
  totalSeconds: number;
  maxSeconds: number | null;
}

export interface CaseListFilter extends ListScope {
  workflowId?: string;
  status?: CaseStatus;
  /** Created at or after (ISO time). */
  createdFrom?: string;
  /** Created before (ISO time). */
  createdBefore?: string;
  after?: Keyset;
  limit: number;
}

export interface StartCaseInput {
  inputs: Record<string, unknown>;
  callbackUrl?: string;
  deadlineMs: number;
  temporalWorkflowId: string;
  /** A delayed start's time (ISO). */
  startAt?: string;
}

const now = () => new Date().toISOString();

/**
 * The top-level case of the tree `caseId` is in. Its recorded root, or its own id when it is top-level. A
 * sub-workflow case without a recorded root was written by a process from before the column (a rolling upgrade):
 * its parents are walked up, so its subtree still counts against the whole tree's bound.
 */
async function treeRoot(trx: Db, caseId: string): Promise<string> {
  let id = caseId;
  for (let level = 0; level < maxCallDepthBound; level += 1) {
    const row = await trx
      .selectFrom('cases')
      .select(['root_case_id', 'parent_case_id'])
      .where('id', '=', id)
      .executeTakeFirst();
    // An ancestor retention erased: the highest case still there counts as the top, as migration 118's fill takes it.
    if (!row) return id;
    if (row.root_case_id !== null) return row.root_case_id;
    if (row.parent_case_id === null) return id;
    id = row.parent_case_id;
  }
  return id;
}

const json = (value: unknown): string => JSON.stringify(value);
/** A JSON column's value, or `fallback` when it holds none. */
function parse<T>(text: string | null, fallback: T): T {
  return text === null ? fallback : ((JSON.parse(text) as T | null) ?? fallback);
}

const summaryColumns = [
  'id',
  'organization_id',
  'workspace_id',
  'workflow_id',
  'workflow_version_id',
  'workflow_version_number',
  'title',
  'source',
  'status',
  'error',
  'created_at',
  'started_at',
  'finished_at',
] as const;

function toSummary(r: Pick<Selectable<CaseTable>, (typeof summaryColumns)[number]>): CaseSummary {
  return {
    id: r.id,
    organizationId: r.organization_id,
    workspaceId: r.workspace_id,
    workflowId: r.workflow_id,
    workflowVersionId: r.workflow_version_id,
    workflowVersionNumber: r.workflow_version_number,
    title: r.title,
    source: r.source,
    status: r.status as CaseStatus,
    error: parse<CaseError | null>(r.error, null),
    createdAt: r.created_at,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
  };
}

/**
 * Object.assign, not a literal that starts with `...toSummary(r)`: on Node 20's V8 such a literal costs ~1.7 µs per
 * property after the spread (~36 µs here, against ~1.6), and every case is read three times (docs/performance.md).
 */
function toCase(r: Selectable<CaseTable>): CaseRecord {
  return Object.assign(toSummary(r), {
    entityId: r.entity_id,
    description: r.description,
    refUserId: r.ref_user_id,
    webAppId: r.web_app_id,
    hookId: r.hook_id,
    workspaces: r.workspaces,
    initialInput: parse<Record<string, unknown>>(r.initial_input, {}),
    inputs: parse<Record<string, unknown> | null>(r.inputs, null),
    callbackUrl: r.callback_url,
    results: parse<CaseResults | null>(r.results, null),
    deadlineMs: r.deadline_ms,
    temporalWorkflowId: r.temporal_workflow_id,
    temporalRunId: r.temporal_run_id,
    createdByKeyId: r.created_by_key_id,
    createdByUserId: r.created_by_user_id,
    scheduleId: r.schedule_id,
    startAt: r.start_at,
    queuedAt: r.queued_at,
    rerunOf: r.rerun_of,
    rerunFrom: rerunFroms.find((f) => f === r.rerun_from) ?? null,
    parent:
      r.parent_case_id !== null && r.parent_node_id !== null
        ? { caseId: r.parent_case_id, nodeId: r.parent_node_id }
        : null,
  });
}

function toNode(r: Selectable<CaseNodeTable>, name: string): NodeRecord {
  return {
    nodeId: r.node_id,
    name,
    handlerClass: r.handler_class,
    status: r.status as NodeRecord['status'],
    inputs: parse<Record<string, unknown> | undefined>(r.inputs, undefined),
    outputs: parse<Record<string, unknown> | undefined>(r.outputs, undefined),
    logs: parse<NodeRecord['logs']>(r.logs, []),
    error: parse<NodeRecord['error']>(r.error, undefined),
    attempts: r.attempts,
    usage: parse<NodeRecord['usage']>(r.usage, undefined),
    startedAt: r.started_at ?? undefined,
    finishedAt: r.finished_at ?? undefined,
    clock: nodeClocks.find((c) => c === r.clock),
    ...(r.reused_from === null ? {} : { reused: JSON.parse(r.reused_from) as ReusedFrom }),
    ...(r.child_case_id !== null ? { childCaseId: r.child_case_id } : {}),
  };
}

/** A new case row: PENDING, nothing run yet. */
function newRow(id: string, input: CreateCaseInput): Insertable<CaseTable> {
  return {
    id,
    organization_id: input.organizationId,
    workspace_id: input.workspaceId,
    workflow_id: input.workflowId,
    entity_id: input.entityId,
    workflow_version_id: input.workflowVersionId,
    workflow_version_number: input.workflowVersionNumber,
    title: input.title ?? null,
    description: input.description ?? null,
    ref_user_id: input.refUserId ?? null,
    source: input.source,
    web_app_id: input.webAppId ?? null,
    hook_id: input.hookId ?? null,
    workspaces: input.workspaces ?? null,
    initial_input: json(input.initialInput),
    inputs: null,
    callback_url: null,
    status: 'PENDING',
    error: null,
    results: null,
    deadline_ms: null,
    temporal_workflow_id: null,
    temporal_run_id: null,
    created_by_key_id: input.createdByKeyId,
    created_by_user_id: input.createdByUserId,
    created_at: now(),
    queued_at: null,
    started_at: null,
    finished_at: null,
    schedule_id: input.scheduleId ?? null,
    start_at: null,
    rerun_of: input.rerunOf ?? null,
    rerun_from: input.rerunFrom ?? null,
    parent_case_id: null,
    parent_node_id: null,
    root_case_id: null,
  };
}

/** PENDING → RUNNING with the run's settings (markRunning), compiled once (compiled-statement.ts), with `only` if given. */
function markRunningStatement(only?: CaseCondition) {
  return new CompiledStatement(
    (
      db,
      v: {
        id: string;
        inputs: string;
        callbackUrl: string | null;
        deadlineMs: number;
        temporalWorkflowId: string;
        startedAt: string;
        startAt: string | null;
      },
    ) => {
      const query = db
        .updateTable('cases')
        .set({
          status: 'RUNNING',
          inputs: v.inputs,
          callback_url: v.callbackUrl,
          deadline_ms: v.deadlineMs,
          temporal_workflow_id: v.temporalWorkflowId,
          started_at: v.startedAt,
          start_at: v.startAt,
        })
        .where('id', '=', v.id)
        .where('status', '=', 'PENDING');
      return only ? query.where(only) : query;
    },
  );
}

/**
 * Cases and their node records. Status changes are compare-and-set in SQL:
 * PENDING → RUNNING once (so executing twice cannot start two runs), and a
 * terminal status is never overwritten.
 */
export class CaseRepo {
  /** The statements every case runs, compiled once (compiled-statement.ts). */
  private readonly statements = {
    insert: new CompiledStatement((db, row: Insertable<CaseTable>) => db.insertInto('cases').values(row)),
    find: new CompiledStatement((db, v: { id: string }) => db.selectFrom('cases').selectAll().where('id', '=', v.id)),
    setRunId: new CompiledStatement((db, v: { id: string; runId: string }) =>
      db
        .updateTable('cases')
        .set({ temporal_run_id: v.runId })
        .where('id', '=', v.id)
        .where('temporal_run_id', 'is', null)
        .returningAll(),
    ),
    finalize: new CompiledStatement(
      (
        db,
        v: {
          id: string;
          status: CaseStatus;
          error: string | null;
          results: string;
          runId: string;
          finishedAt: string;
        },
      ) =>
        db
          .updateTable('cases')
          .set({
            status: v.status,
            error: v.error,
            results: v.results,
            temporal_run_id: v.runId,
            finished_at: v.finishedAt,
          })
          .where('id', '=', v.id)
          .where('status', 'not in', [...terminalStatuses])
          .returning((eb) => [
            'organization_id',
            'workspace_id',
            'workflow_id',
            'started_at',
            'finished_at',
            // Read here rather than by a statement of its own: whether a queued case may take the freed slot.
            eb
              .exists(
                eb
                  .selectFrom('cases as queued')
                  .select('queued.id')
                  .whereRef('queued.organization_id', '=', 'cases.organization_id')
                  .where('queued.status', '=', 'QUEUED'),
              )
              .as('organization_has_queued'),
          ]),
    ),
    /** The end's deliveries (the subscribers' and the case's callback), each written once. */
    deliveries: new CompiledRows((db, rows: Insertable<CallbackDeliveryTable>[]) =>
      db
        .insertInto('callback_deliveries')
        .values(rows)
        .onConflict((oc) => oc.column('id').doNothing()),
    ),
    /** The end's node records, each written once. */
    nodes: new CompiledRows((db, rows: Insertable<CaseNodeTable>[]) =>
      db
        .insertInto('case_nodes')
        .values(rows)
        .onConflict((oc) => oc.columns(['case_id', 'node_id']).doNothing()),
    ),
  };

  /** markRunning's statement, and one per condition it was given (admission's is made once per process). */
  private readonly markRunningAlways = markRunningStatement();
  private readonly markRunningWhere = new WeakMap<CaseCondition, ReturnType<typeof markRunningStatement>>();

  constructor(private readonly db: Db) {}

  async create(input: CreateCaseInput): Promise<CaseRecord> {
    const row = newRow(input.id ?? randomUUID(), input);
    await this.statements.insert.run(this.db, row);
    return toCase(row as Selectable<CaseTable>);
  }

  /**
   * A sub-workflow case, written RUNNING with its inputs (its run is started by the parent's
   * workflow right after, as a Temporal child). The id comes from the parent's run, so a retried
   * write leaves the row the first one wrote.
   */
  /**
   * Writes a sub-workflow case under its parent, unless the parent's top-level case has `maxCallCases`
   * sub-workflow cases already ('full': nothing written); one written before (a retried activity) stays.
   * The top-level case's row is written to first, so children of one tree count one after another (a row
   * lock on Postgres, the write lock on SQLite) and the bound holds exactly.
   */
  async createChild(
    id: string,
    input: CreateCaseInput,
    parent: CaseParent,
    start: StartCaseInput,
    maxCallCases: number,
  ): Promise<'created' | 'full'> {
    return this.db.transaction().execute(async (trx) => {
      const root = await treeRoot(trx, parent.caseId);
      await trx
        .updateTable('cases')
        .set((eb) => ({ root_case_id: eb.ref('root_case_id') }))
        .where('id', '=', root)
        .execute();
      if (await trx.selectFrom('cases').select('id').where('id', '=', id).executeTakeFirst()) return 'created';
      const { count } = await trx
        .selectFrom('cases')
        .select((eb) => eb.fn.countAll<number | string | bigint>().as('count'))
        .where('root_case_id', '=', root)
        .executeTakeFirstOrThrow();
      if (Number(count) >= maxCallCases) return 'full';
      await trx
        .insertInto('cases')
        .values({
          ...newRow(id, input),
          status: 'RUNNING',
          inputs: json(start.inputs),
          deadline_ms: start.deadlineMs,
          temporal_workflow_id: start.temporalWorkflowId,
          started_at: now(),
          parent_case_id: parent.caseId,
          parent_node_id: parent.nodeId,
          root_case_id: root,
        })
        .execute();
      return 'created';
    });
  }

  /** A sub-workflow case whose run never started (its parent ended first): RUNNING → `status`. */
  async endUnstarted(id: string, status: 'CANCELLED' | 'FAILED', error: CaseError): Promise<boolean> {
    const result = await this.db
      .updateTable('cases')
      .set({ status, error: json(error), results: json({}), finished_at: now() })
      .where('id', '=', id)
      .where('status', '=', 'RUNNING')
      .where('temporal_run_id', 'is', null)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async find(id: string): Promise<CaseRecord | undefined> {
    const [r] = (await this.statements.find.run(this.db, { id })).rows;
    return r && toCase(r);
  }

  /** Cases newest first, one page after `after`, within the lister's scope and filters. */
  async list(filter: CaseListFilter): Promise<Page<CaseSummary>> {
    return pageOf(filter.limit, async (take) => {
      let query = this.matching(filter).select(summaryColumns);
      if (filter.after) query = query.where(olderThan('cases', filter.after));
      const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(take).execute();
      return rows.map(toSummary);
    });
  }

  /** How many cases the list's filters match (a bulk rerun's size). */
  async count(filter: Omit<CaseListFilter, 'after' | 'limit'>): Promise<number> {
    const row = await this.matching(filter)
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** The cases of the list's scope and filters. */
  private matching(filter: Omit<CaseListFilter, 'after' | 'limit'>) {
    let query = this.db.selectFrom('cases').where('organization_id', '=', filter.organizationId);
    if (filter.workspaceIds) query = query.where('workspace_id', 'in', filter.workspaceIds);
    if (filter.workflowId) query = query.where('workflow_id', '=', filter.workflowId);
    if (filter.status) query = query.where('status', '=', filter.status);
    if (filter.createdFrom) query = query.where('created_at', '>=', filter.createdFrom);
    if (filter.createdBefore) query = query.where('created_at', '<', filter.createdBefore);
    return query;
  }

  /** Case counts and run times per workflow and status, aggregated in SQL (one row per group). */
  async stats(filter: CaseStatsFilter): Promise<CaseStatsRow[]> {
    const seconds = secondsBetween(this.db, 'started_at', 'finished_at');
    let query = this.db
      .selectFrom('cases')
      .select((eb) => [
        'workflow_id',
        'workspace_id',
        'status',
        eb.fn.countAll<string | number>().as('cases'),
        eb.fn.count<string | number>(seconds).as('timed'),
        eb.fn.sum<string | number | null>(seconds).as('total_seconds'),
        eb.fn.max<string | number | null>(seconds).as('max_seconds'),
      ])
      .where('organization_id', '=', filter.organizationId)
      .where('created_at', '>=', filter.createdFrom)
      .where('created_at', '<', filter.createdBefore);
    if (filter.workspaceIds) query = query.where('workspace_id', 'in', filter.workspaceIds);
    if (filter.workflowId) query = query.where('workflow_id', '=', filter.workflowId);
    const rows = await query
      .groupBy(['workflow_id', 'workspace_id', 'status'])
      .orderBy('workflow_id')
      .orderBy('status')
      .execute();
    return rows.map((row) => ({
      workflowId: row.workflow_id,
      workspaceId: row.workspace_id,
      status: row.status as CaseStatus,
      cases: Number(row.cases),
      timed: Number(row.timed),
      totalSeconds: Number(row.total_seconds ?? 0),
      maxSeconds: row.max_seconds === null ? null : Number(row.max_seconds),
    }));
  }

  /**
   * PENDING → RUNNING with the run's inputs; false when the case was not PENDING (executed twice,
   * cancelled) or, with `only`, when that condition on its row does not hold. The statement is compiled once per
   * condition: a caller gives the same one each time.
   */
  async markRunning(id: string, start: StartCaseInput, only?: CaseCondition): Promise<boolean> {
    let statement = only ? this.markRunningWhere.get(only) : this.markRunningAlways;
    if (!statement) {
      statement = markRunningStatement(only);
      if (only) this.markRunningWhere.set(only, statement);
    }
    const result = await statement.run(this.db, {
      id,
      inputs: json(start.inputs),
      callbackUrl: start.callbackUrl ?? null,
      deadlineMs: start.deadlineMs,
      temporalWorkflowId: start.temporalWorkflowId,
      startedAt: now(),
      startAt: start.startAt ?? null,
    });
    return (result.numAffectedRows ?? 0n) > 0n;
  }

  /** RUNNING cases with no Temporal run linked, accepted before `startedBefore`: candidates for resumeUnstarted. */
  async listUnstarted(startedBefore: string, limit = 100): Promise<CaseRecord[]> {
    const rows = await this.db
      .selectFrom('cases')
      .selectAll()
      .where('status', '=', 'RUNNING')
      .where('temporal_run_id', 'is', null)
      // A sub-workflow case's run is started by its parent's run, never by the recovery loop.
      .where('parent_case_id', 'is', null)
      .where('started_at', '<', startedBefore)
      .orderBy('started_at')
      .limit(limit)
      .execute();
    return rows.map(toCase);
  }

  /**
   * RUNNING cases with a linked run, and sub-workflow cases started before `childrenStartedBefore`
   * (their parent's run starts their run, which is linked only when it ends), in id order after
   * `afterId` (keyset pages for the reconciler).
   */
  async listRunningWithRun(
    afterId: string | undefined,
    limit: number,
    childrenStartedBefore: string,
  ): Promise<CaseRecord[]> {
    let query = this.db
      .selectFrom('cases')
      .selectAll()
      .where('status', '=', 'RUNNING')
      .where((eb) =>
        eb.or([
          eb('temporal_run_id', 'is not', null),
          eb.and([eb('parent_case_id', 'is not', null), eb('started_at', '<', childrenStartedBefore)]),
        ]),
      );
    if (afterId !== undefined) query = query.where('id', '>', afterId);
    const rows = await query.orderBy('id').limit(limit).execute();
    return rows.map(toCase);
  }

  /** Undoes markRunning when the workflow could not be started at all, so the caller may execute again. */
  async revertToPending(id: string): Promise<void> {
    await this.db
      .updateTable('cases')
      .set({
        status: 'PENDING',
        inputs: null,
        callback_url: null,
        deadline_ms: null,
        temporal_workflow_id: null,
        started_at: null,
        start_at: null,
      })
      .where('id', '=', id)
      .where('status', '=', 'RUNNING')
      .where('temporal_run_id', 'is', null)
      .execute();
  }

  /** Links the case's run; the case as it now stands, or undefined when a run was linked already. */
  async setRunId(id: string, runId: string): Promise<CaseRecord | undefined> {
    const [r] = (await this.statements.setRunId.run(this.db, { id, runId })).rows;
    return r && toCase(r);
  }

  /** A case that never ran: PENDING → CANCELLED. */
  async cancelPending(id: string): Promise<boolean> {
    const at = now();
    const result = await this.db
      .updateTable('cases')
      .set({ status: 'CANCELLED', error: json({ message: 'Cancelled before it was executed' }), finished_at: at })
      .where('id', '=', id)
      .where('status', '=', 'PENDING')
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /**
   * Records the end of a run in one transaction: the terminal status, error
   * and results (only if the case is not terminal yet), one row per node, the
   * subscribers' deliveries (`outbox`, returned) and the case's own callback
   * delivery (`callback`, pending: its first attempt follows the commit).
   * `organizationHasQueued`: whether the organization had cases queued for a slot as the end committed.
   * Returns what the metrics need of the finished case (read back by the same
   * statement), or undefined when the case already had a terminal status (a
   * replayed or retried finalization), in which case nothing is written.
   */
  async finalize(
    input: FinalizeCaseInput,
    outbox?: CaseEndOutbox,
    callback?: NewDelivery,
  ): Promise<(FinishedCase & { deliveries: NewDelivery[]; organizationHasQueued: boolean }) | undefined> {
    const { progress } = input;
    return this.db.transaction().execute(async (trx) => {
      const [finished] = (
        await this.statements.finalize.run(trx, {
          id: input.caseId,
          status: input.status,
          error: progress.error ? json(progress.error) : null,
          results: json(progress.results),
          runId: input.runId,
          finishedAt: now(),
        })
      ).rows;
      if (!finished) return undefined;
      const ended: FinishedCase = {
        organizationId: finished.organization_id,
        workspaceId: finished.workspace_id,
        workflowId: finished.workflow_id,
        startedAt: finished.started_at,
        finishedAt: finished.finished_at,
      };
      const deliveries = outbox ? outbox(ended) : [];
      const written = callback ? [...deliveries, callback] : deliveries;
      if (written.length > 0) {
        const at = now();
        await this.statements.deliveries.run(
          trx,
          written.map((d) => pendingDeliveryRow(d, at)),
        );
      }
      const finishedOrder = new Map(progress.executed.map((id, i) => [id, i]));
      const rows: Insertable<CaseNodeTable>[] = Object.values(progress.nodes).map((n, i) => ({
        case_id: input.caseId,
        node_id: n.nodeId,
        seq: finishedOrder.get(n.nodeId) ?? progress.executed.length + i,
        status: n.status,
        handler_class: n.handlerClass,
        inputs: n.inputs === undefined ? null : json(n.inputs),
        outputs: n.outputs === undefined ? null : json(n.outputs),
        logs: json(n.logs),
        error: n.error === undefined ? null : json(n.error),
        attempts: n.attempts,
        usage: n.usage === undefined ? null : json(n.usage),
        started_at: n.startedAt ?? null,
        finished_at: n.finishedAt ?? null,
        clock: n.clock ?? null,
        reused_from: n.reused === undefined ? null : json(n.reused),
        child_case_id: n.childCaseId ?? null,
      }));
      if (rows.length > 0) {
        await this.statements.nodes.run(trx, rows);
      }
      return { ...ended, deliveries, organizationHasQueued: Boolean(finished.organization_has_queued) };
    });
  }

  /** The ids of the cases that rerun this one, oldest first. */
  async listReruns(caseId: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom('cases')
      .select('id')
      .where('rerun_of', '=', caseId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map((r) => r.id);
  }

  /** Node records of a finished case in execution order; names come from the graph (not stored twice). */
  async listNodes(caseId: string, nameOf: (nodeId: string) => string): Promise<NodeRecord[]> {
    const rows = await this.db
      .selectFrom('case_nodes')
      .selectAll()
      .where('case_id', '=', caseId)
      .orderBy('seq')
      .execute();
    return rows.map((r) => toNode(r, nameOf(r.node_id)));
  }
}
