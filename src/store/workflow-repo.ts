import { randomUUID } from 'node:crypto';
import type { ExpressionBuilder, Selectable, Transaction } from 'kysely';
import {
  graphSchema,
  type RunnableVersion,
  type WorkflowGraph,
  type WorkflowVersionSnapshot,
} from '../domain/graph.js';
import type { Db } from './database.js';
import { CompiledStatement } from './compiled-statement.js';
import { containsText, olderThan, pageOf, type Keyset, type ListScope } from './paging.js';
import type { Page } from '../domain/page.js';
import type {
  BuilderType,
  VersionPin,
  VersionStatus,
  WorkflowListItem,
  WorkflowRecord,
  WorkflowVersionRecord,
  WorkflowWithVersion,
} from '../domain/workflow-records.js';
import type { Database } from './schema.js';
import type { WorkflowTable, WorkflowVersionTable } from './tables/workflows.js';

export const builderType: BuilderType = 'SERVICE_V2';

export interface CreateWorkflowInput {
  organizationId: string;
  workspaceId: string;
  name: string;
  description?: string;
  createdBy: string;
  graph: WorkflowGraph;
  activeStatus: VersionStatus;
  orgUnitIds: string[];
  maxConcurrentCases?: number | null;
}

/** Any subset; what is left out is carried over from the latest version. */
export interface UpdateWorkflowInput {
  name?: string;
  description?: string;
  graph?: WorkflowGraph;
  /** Status of the new version; defaults to the latest version's status. */
  activeStatus?: VersionStatus;
  /** The workflow's own concurrency cap (null: none); undefined leaves it as it is. */
  maxConcurrentCases?: number | null;
  updatedBy: string;
}

export interface WorkflowListFilter extends ListScope {
  /** active: has an active version; inactive: has none. */
  status?: VersionStatus;
  /** Part of the name, any case. */
  nameContains?: string;
  after?: Keyset;
  limit: number;
}

/** A workflow and the id of its latest active version (null when none is active), as read together. */
export interface WorkflowForRun {
  workflow: WorkflowRecord;
  activeVersionId: string | null;
}

const now = () => new Date().toISOString();

function toWorkflow(r: Selectable<WorkflowTable>): WorkflowRecord {
  return {
    id: r.id,
    entityId: r.entity_id,
    organizationId: r.organization_id,
    workspaceId: r.workspace_id,
    name: r.name,
    description: r.description,
    builderType: r.builder_type === 'SERVICE_V1' ? 'SERVICE_V1' : 'SERVICE_V2',
    createdBy: r.created_by,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    orgUnitIds: JSON.parse(r.org_unit_ids) as string[],
    maxConcurrentCases: r.max_concurrent_cases,
  };
}

type VersionSummaryRow = Omit<Selectable<WorkflowVersionTable>, 'graph'>;

function toVersionSummary(r: VersionSummaryRow): Omit<WorkflowVersionRecord, 'graph'> {
  return {
    id: r.id,
    workflowId: r.workflow_id,
    versionNumber: r.version_number,
    status: r.status === 'active' ? 'active' : 'inactive',
    name: r.name,
    description: r.description,
    createdBy: r.created_by,
    createdAt: r.created_at,
  };
}

/** Stored graphs were validated when saved; parsing again gives the typed, defaulted shape. */
function parseGraph(text: string): WorkflowGraph {
  return graphSchema.parse(JSON.parse(text));
}

function toVersion(r: Selectable<WorkflowVersionTable>): WorkflowVersionRecord {
  return { ...toVersionSummary(r), graph: parseGraph(r.graph) };
}

/** The workflow of the row has an active version (what unpinned runs use). */
function hasActiveVersion(eb: ExpressionBuilder<Database, 'workflows'>) {
  return eb.exists(
    eb
      .selectFrom('workflow_versions')
      .select('workflow_versions.id')
      .whereRef('workflow_versions.workflow_id', '=', 'workflows.id')
      .where('workflow_versions.status', '=', 'active'),
  );
}

export function toSnapshot(workflow: WorkflowRecord, version: WorkflowVersionRecord): WorkflowVersionSnapshot {
  return {
    workflowId: workflow.id,
    entityId: workflow.entityId,
    versionId: version.id,
    versionNumber: version.versionNumber,
    organizationId: workflow.organizationId,
    workspaceId: workflow.workspaceId,
    name: version.name,
    activeStatus: version.status,
    graph: version.graph,
  };
}

/**
 * Workflows and their immutable versions. Every update cuts a new version
 * numbered one past the latest; only a version's status changes in place
 * (activate / deactivate), and at most one version is active at a time.
 */
/** A workflow by `column` with the id of its latest active version (null when none is active). */
function workflowForRun(column: 'workflows.id' | 'workflows.entity_id') {
  return new CompiledStatement((db, v: { value: string }) =>
    db
      .selectFrom('workflows')
      .selectAll('workflows')
      .select((eb) =>
        eb
          .selectFrom('workflow_versions')
          .select('workflow_versions.id')
          .whereRef('workflow_versions.workflow_id', '=', 'workflows.id')
          .where('workflow_versions.status', '=', 'active')
          .orderBy('workflow_versions.version_number', 'desc')
          .limit(1)
          .as('active_version_id'),
      )
      .where(column, '=', v.value),
  );
}

export class WorkflowRepo {
  /** The query of findWorkflowForRun, which every initiate runs: compiled once per column (compiled-statement.ts). */
  private readonly forRunById = workflowForRun('workflows.id');
  private readonly forRunByEntityId = workflowForRun('workflows.entity_id');

  constructor(private readonly db: Db) {}

  async create(input: CreateWorkflowInput): Promise<WorkflowWithVersion> {
    const at = now();
    const row: Selectable<WorkflowTable> = {
      id: randomUUID(),
      entity_id: randomUUID(),
      organization_id: input.organizationId,
      workspace_id: input.workspaceId,
      name: input.name,
      description: input.description ?? null,
      builder_type: builderType,
      created_by: input.createdBy,
      created_at: at,
      updated_at: at,
      org_unit_ids: JSON.stringify(input.orgUnitIds),
      max_concurrent_cases: input.maxConcurrentCases ?? null,
    };
    const versionRow: Selectable<WorkflowVersionTable> = {
      id: randomUUID(),
      workflow_id: row.id,
      version_number: 1,
      status: input.activeStatus,
      graph: JSON.stringify(input.graph),
      name: input.name,
      description: input.description ?? null,
      created_by: input.createdBy,
      created_at: at,
    };
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('workflows').values(row).execute();
      await trx.insertInto('workflow_versions').values(versionRow).execute();
    });
    return { workflow: toWorkflow(row), version: toVersion(versionRow) };
  }

  /** Cuts a new version from the latest one; undefined when the workflow does not exist. */
  async update(workflowId: string, input: UpdateWorkflowInput): Promise<WorkflowWithVersion | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const at = now();
      // Touching the workflow row first takes its row lock (Postgres), so concurrent
      // updates of one workflow queue here and each reads the number the previous one wrote.
      const touched = await trx
        .updateTable('workflows')
        .set({ updated_at: at })
        .where('id', '=', workflowId)
        .executeTakeFirst();
      if (touched.numUpdatedRows === 0n) return undefined;
      const latest = await this.latestVersionRow(trx, workflowId);
      if (!latest) return undefined;
      const name = input.name ?? latest.name;
      const description = input.description !== undefined ? input.description : latest.description;
      const versionRow: Selectable<WorkflowVersionTable> = {
        id: randomUUID(),
        workflow_id: workflowId,
        version_number: latest.version_number + 1,
        status: input.activeStatus ?? latest.status,
        graph: input.graph ? JSON.stringify(input.graph) : latest.graph,
        name,
        description,
        created_by: input.updatedBy,
        created_at: at,
      };
      if (versionRow.status === 'active') await this.deactivateOthers(trx, workflowId, versionRow.id);
      await trx.insertInto('workflow_versions').values(versionRow).execute();
      const cap = input.maxConcurrentCases === undefined ? {} : { max_concurrent_cases: input.maxConcurrentCases };
      await trx
        .updateTable('workflows')
        .set({ name, description, ...cap })
        .where('id', '=', workflowId)
        .execute();
      const row = await trx.selectFrom('workflows').selectAll().where('id', '=', workflowId).executeTakeFirstOrThrow();
      return { workflow: toWorkflow(row), version: toVersion(versionRow) };
    });
  }

  /**
   * Sets one version's status; activating it deactivates the others, so at
   * most one version is active and "activate" is also how to roll back.
   * Undefined when the version is not one of this workflow's.
   */
  async setVersionStatus(
    workflowId: string,
    versionId: string,
    status: VersionStatus,
  ): Promise<WorkflowVersionRecord | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const touched = await trx
        .updateTable('workflows')
        .set({ updated_at: now() })
        .where('id', '=', workflowId)
        .executeTakeFirst();
      if (touched.numUpdatedRows === 0n) return undefined;
      const result = await trx
        .updateTable('workflow_versions')
        .set({ status })
        .where('id', '=', versionId)
        .where('workflow_id', '=', workflowId)
        .executeTakeFirst();
      if (result.numUpdatedRows === 0n) return undefined;
      if (status === 'active') await this.deactivateOthers(trx, workflowId, versionId);
      const row = await trx
        .selectFrom('workflow_versions')
        .selectAll()
        .where('id', '=', versionId)
        .executeTakeFirstOrThrow();
      return toVersion(row);
    });
  }

  /** Deactivates every version, so no unpinned run can start; returns how many were active. */
  async deactivateAllVersions(workflowId: string): Promise<number> {
    const result = await this.db
      .updateTable('workflow_versions')
      .set({ status: 'inactive' })
      .where('workflow_id', '=', workflowId)
      .where('status', '=', 'active')
      .executeTakeFirst();
    await this.db.updateTable('workflows').set({ updated_at: now() }).where('id', '=', workflowId).execute();
    return Number(result.numUpdatedRows);
  }

  /** Workflows newest first, one page after `after`, within the lister's scope and filters. */
  async list(filter: WorkflowListFilter): Promise<Page<WorkflowListItem>> {
    return pageOf(filter.limit, async (take) => {
      let query = this.db
        .selectFrom('workflows')
        .selectAll('workflows')
        .select((eb) => [
          eb
            .selectFrom('workflow_versions')
            .select((v) => v.fn.max('workflow_versions.version_number').as('n'))
            .whereRef('workflow_versions.workflow_id', '=', 'workflows.id')
            .as('latest_version_number'),
          eb
            .selectFrom('workflow_versions')
            .select('workflow_versions.version_number')
            .whereRef('workflow_versions.workflow_id', '=', 'workflows.id')
            .where('workflow_versions.status', '=', 'active')
            .limit(1)
            .as('active_version_number'),
        ])
        .where('workflows.organization_id', '=', filter.organizationId);
      if (filter.workspaceIds) query = query.where('workflows.workspace_id', 'in', filter.workspaceIds);
      if (filter.status) {
        const wanted = filter.status;
        query = query.where((eb) => (wanted === 'active' ? hasActiveVersion(eb) : eb.not(hasActiveVersion(eb))));
      }
      if (filter.nameContains) query = query.where(containsText('workflows.name', filter.nameContains));
      if (filter.after) query = query.where(olderThan('workflows', filter.after));
      const rows = await query
        .orderBy('workflows.created_at', 'desc')
        .orderBy('workflows.id', 'desc')
        .limit(take)
        .execute();
      return rows.map((r) => ({
        ...toWorkflow(r),
        latestVersionNumber: r.latest_version_number ?? 0,
        activeVersionNumber: r.active_version_number,
      }));
    });
  }

  async findWorkflow(id: string): Promise<WorkflowRecord | undefined> {
    const r = await this.db.selectFrom('workflows').selectAll().where('id', '=', id).executeTakeFirst();
    return r && toWorkflow(r);
  }

  async findWorkflowByEntityId(entityId: string): Promise<WorkflowRecord | undefined> {
    const r = await this.db.selectFrom('workflows').selectAll().where('entity_id', '=', entityId).executeTakeFirst();
    return r && toWorkflow(r);
  }

  /** A workflow by its id or, failing that, by its entity id (the deprecated paths take either). */
  async findWorkflowByIdOrEntityId(idOrEntityId: string): Promise<WorkflowRecord | undefined> {
    return (await this.findWorkflow(idOrEntityId)) ?? (await this.findWorkflowByEntityId(idOrEntityId));
  }

  /**
   * One page of versions without their graphs, newest first: numbers below `beforeNumber` when
   * given. Graphs are not read, so the cost does not grow with the versions' sizes.
   */
  async listVersionSummaries(
    workflowId: string,
    page: { limit: number; beforeNumber?: number },
  ): Promise<Array<Omit<WorkflowVersionRecord, 'graph'>>> {
    let query = this.db
      .selectFrom('workflow_versions')
      .select(['id', 'workflow_id', 'version_number', 'status', 'name', 'description', 'created_by', 'created_at'])
      .where('workflow_id', '=', workflowId);
    if (page.beforeNumber !== undefined) query = query.where('version_number', '<', page.beforeNumber);
    const rows = await query.orderBy('version_number', 'desc').limit(page.limit).execute();
    return rows.map(toVersionSummary);
  }

  async latestVersion(workflowId: string): Promise<WorkflowVersionRecord | undefined> {
    const r = await this.latestVersionRow(this.db, workflowId);
    return r && toVersion(r);
  }

  async latestActiveVersion(workflowId: string): Promise<WorkflowVersionRecord | undefined> {
    const r = await this.db
      .selectFrom('workflow_versions')
      .selectAll()
      .where('workflow_id', '=', workflowId)
      .where('status', '=', 'active')
      .orderBy('version_number', 'desc')
      .limit(1)
      .executeTakeFirst();
    return r && toVersion(r);
  }

  /** One version of this workflow by id or number (the id wins when both are given). */
  async findWorkflowVersion(workflowId: string, pin: VersionPin): Promise<WorkflowVersionRecord | undefined> {
    let query = this.db.selectFrom('workflow_versions').selectAll().where('workflow_id', '=', workflowId);
    if (pin.versionId !== undefined) query = query.where('id', '=', pin.versionId);
    else if (pin.versionNumber !== undefined) query = query.where('version_number', '=', pin.versionNumber);
    else return undefined;
    const r = await query.executeTakeFirst();
    return r && toVersion(r);
  }

  /**
   * A workflow by id or entity id with the id of its latest active version (null when none is
   * active), in one query: the decision an unpinned run takes, always read from the store.
   */
  async findWorkflowForRun(by: { id: string } | { entityId: string }): Promise<WorkflowForRun | undefined> {
    const [statement, value] = 'id' in by ? [this.forRunById, by.id] : [this.forRunByEntityId, by.entityId];
    const [r] = (await statement.run(this.db, { value })).rows;
    return r && { workflow: toWorkflow(r), activeVersionId: r.active_version_id };
  }

  /**
   * A version's immutable content with its workflow's ids, by version id, in one query; also the
   * length of the stored graph's JSON, which is what a cache of parsed versions weighs it by.
   */
  async findRunnableVersion(versionId: string): Promise<{ version: RunnableVersion; graphChars: number } | undefined> {
    const r = await this.db
      .selectFrom('workflow_versions')
      .innerJoin('workflows', 'workflows.id', 'workflow_versions.workflow_id')
      .select([
        'workflow_versions.id',
        'workflow_versions.workflow_id',
        'workflow_versions.version_number',
        'workflow_versions.name',
        'workflow_versions.graph',
        'workflows.entity_id',
        'workflows.organization_id',
        'workflows.workspace_id',
      ])
      .where('workflow_versions.id', '=', versionId)
      .executeTakeFirst();
    if (!r) return undefined;
    const version: RunnableVersion = {
      workflowId: r.workflow_id,
      entityId: r.entity_id,
      versionId: r.id,
      versionNumber: r.version_number,
      organizationId: r.organization_id,
      workspaceId: r.workspace_id,
      name: r.name,
      graph: parseGraph(r.graph),
    };
    return { version, graphChars: r.graph.length };
  }

  private async deactivateOthers(trx: Transaction<Database>, workflowId: string, keepVersionId: string): Promise<void> {
    await trx
      .updateTable('workflow_versions')
      .set({ status: 'inactive' })
      .where('workflow_id', '=', workflowId)
      .where('id', '!=', keepVersionId)
      .where('status', '=', 'active')
      .execute();
  }

  private latestVersionRow(
    db: Db | Transaction<Database>,
    workflowId: string,
  ): Promise<Selectable<WorkflowVersionTable> | undefined> {
    return db
      .selectFrom('workflow_versions')
      .selectAll()
      .where('workflow_id', '=', workflowId)
      .orderBy('version_number', 'desc')
      .limit(1)
      .executeTakeFirst();
  }
}
