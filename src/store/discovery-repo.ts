import { randomUUID } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { ProcessContent } from '../domain/discovery-process.js';
import type { Db } from './database.js';
import type { DiscoveryProcessTable, DiscoveryProcessVersionTable } from './tables/discovery.js';

export interface ProcessRecord {
  id: string;
  organizationId: string;
  workspaceId: string;
  content: ProcessContent;
  revision: number;
  createdBy: string;
  createdAt: string;
  updatedAt: string;
}

export interface ProcessSnapshotRecord {
  /** The processVersionId. */
  id: string;
  processId: string;
  versionNumber: number;
  content: ProcessContent;
  /** The process's updatedAt when the snapshot was taken. */
  processUpdatedAt: string;
  createdBy: string;
  createdAt: string;
}

const now = () => new Date().toISOString();

const parseContent = (json: string) => JSON.parse(json) as ProcessContent;

function toProcess(row: Selectable<DiscoveryProcessTable>): ProcessRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    workspaceId: row.workspace_id,
    content: parseContent(row.content),
    revision: row.revision,
    createdBy: row.created_by,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toSnapshot(row: Selectable<DiscoveryProcessVersionTable>): ProcessSnapshotRecord {
  return {
    id: row.id,
    processId: row.process_id,
    versionNumber: row.version_number,
    content: parseContent(row.content),
    processUpdatedAt: row.process_updated_at,
    createdBy: row.created_by,
    createdAt: row.created_at,
  };
}

/** Discovered processes and their snapshots: reads and writes only, the rules are DiscoveryService's. */
export class DiscoveryRepo {
  constructor(private readonly db: Db) {}

  async create(input: {
    organizationId: string;
    workspaceId: string;
    createdBy: string;
    content: ProcessContent;
  }): Promise<ProcessRecord> {
    const at = now();
    const row: Selectable<DiscoveryProcessTable> = {
      id: randomUUID(),
      organization_id: input.organizationId,
      workspace_id: input.workspaceId,
      content: JSON.stringify(input.content),
      revision: 1,
      snapshot_count: 0,
      created_by: input.createdBy,
      created_at: at,
      updated_at: at,
    };
    await this.db.insertInto('discovery_processes').values(row).execute();
    return toProcess(row);
  }

  async find(processId: string): Promise<ProcessRecord | undefined> {
    const row = await this.db
      .selectFrom('discovery_processes')
      .selectAll()
      .where('id', '=', processId)
      .executeTakeFirst();
    return row && toProcess(row);
  }

  /**
   * Replaces the document when the process is still at `baseRevision`;
   * undefined when another update got there first (the caller re-reads).
   */
  async replaceContent(
    processId: string,
    baseRevision: number,
    content: ProcessContent,
  ): Promise<ProcessRecord | undefined> {
    const row = await this.db
      .updateTable('discovery_processes')
      .set({ content: JSON.stringify(content), revision: baseRevision + 1, updated_at: now() })
      .where('id', '=', processId)
      .where('revision', '=', baseRevision)
      .returningAll()
      .executeTakeFirst();
    return row && toProcess(row);
  }

  /**
   * Copies the current document into a new numbered snapshot. The counter
   * bump and the read of the document are one statement, so the snapshot is
   * exactly one state of the process even while updates race it.
   */
  async snapshot(processId: string, createdBy: string): Promise<ProcessSnapshotRecord> {
    return this.db.transaction().execute(async (trx) => {
      const bumped = await trx
        .updateTable('discovery_processes')
        .set((eb) => ({ snapshot_count: eb('snapshot_count', '+', 1) }))
        .where('id', '=', processId)
        .returning(['snapshot_count', 'content', 'updated_at'])
        .executeTakeFirstOrThrow();
      const row: Selectable<DiscoveryProcessVersionTable> = {
        id: randomUUID(),
        process_id: processId,
        version_number: bumped.snapshot_count,
        content: bumped.content,
        process_updated_at: bumped.updated_at,
        created_by: createdBy,
        created_at: now(),
      };
      await trx.insertInto('discovery_process_versions').values(row).execute();
      return toSnapshot(row);
    });
  }

  async findSnapshot(processVersionId: string): Promise<ProcessSnapshotRecord | undefined> {
    const row = await this.db
      .selectFrom('discovery_process_versions')
      .selectAll()
      .where('id', '=', processVersionId)
      .executeTakeFirst();
    return row && toSnapshot(row);
  }
}
