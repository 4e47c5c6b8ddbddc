import { randomUUID } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { CatalogField } from '../domain/catalog-field.js';
import type { CodeNodeContent, CodeNodeVersion } from '../domain/code-node-records.js';
import type { Db } from './database.js';
import type { CodeNodeTable, CodeNodeVersionTable } from './tables/code-nodes.js';

const now = () => new Date().toISOString();

function toVersion(node: Selectable<CodeNodeTable>, row: Selectable<CodeNodeVersionTable>): CodeNodeVersion {
  return {
    id: node.id,
    versionId: row.id,
    versionNumber: row.version_number,
    organizationId: node.organization_id,
    name: row.name,
    description: row.description,
    icon: row.icon,
    sourceCode: row.source_code,
    categories: JSON.parse(row.categories) as string[],
    inputs: JSON.parse(row.inputs) as Record<string, CatalogField>,
    outputs: JSON.parse(row.outputs) as Record<string, CatalogField>,
    tags: JSON.parse(row.tags) as string[],
    options: JSON.parse(row.options) as Array<Record<string, unknown>>,
    nonEditableFields: JSON.parse(row.non_editable_fields) as string[],
    createdAt: node.created_at,
    versionCreatedAt: row.created_at,
    createdBy: row.created_by,
  };
}

function versionRow(
  codeNodeId: string,
  versionNumber: number,
  createdBy: string,
  content: CodeNodeContent,
  at: string,
): Selectable<CodeNodeVersionTable> {
  return {
    id: randomUUID(),
    code_node_id: codeNodeId,
    version_number: versionNumber,
    name: content.name,
    description: content.description,
    icon: content.icon,
    source_code: content.sourceCode,
    categories: JSON.stringify(content.categories),
    inputs: JSON.stringify(content.inputs),
    outputs: JSON.stringify(content.outputs),
    tags: JSON.stringify(content.tags),
    options: JSON.stringify(content.options),
    non_editable_fields: JSON.stringify(content.nonEditableFields),
    created_by: createdBy,
    created_at: at,
  };
}

/**
 * The code-node catalog: immutable versions under a stable id. The API cuts
 * versions; the case engine reads any version by its id with findVersion.
 */
export class CodeNodeRepo {
  constructor(private readonly db: Db) {}

  /** Registers a code node with its first version (number 1). */
  async create(organizationId: string, createdBy: string, content: CodeNodeContent): Promise<CodeNodeVersion> {
    const at = now();
    const node: Selectable<CodeNodeTable> = {
      id: randomUUID(),
      organization_id: organizationId,
      latest_version_number: 1,
      created_by: createdBy,
      created_at: at,
      updated_at: at,
    };
    const row = versionRow(node.id, 1, createdBy, content, at);
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('code_nodes').values(node).execute();
      await trx.insertInto('code_node_versions').values(row).execute();
    });
    return toVersion(node, row);
  }

  /**
   * Cuts the next version on top of `baseVersionNumber`. Returns undefined
   * when another update got there first (the caller re-reads and retries), so
   * no update is ever merged onto a stale base.
   */
  async addVersion(
    codeNodeId: string,
    baseVersionNumber: number,
    createdBy: string,
    content: CodeNodeContent,
  ): Promise<CodeNodeVersion | undefined> {
    const at = now();
    const next = baseVersionNumber + 1;
    return this.db.transaction().execute(async (trx) => {
      const moved = await trx
        .updateTable('code_nodes')
        .set({ latest_version_number: next, updated_at: at })
        .where('id', '=', codeNodeId)
        .where('latest_version_number', '=', baseVersionNumber)
        .executeTakeFirst();
      if (Number(moved.numUpdatedRows) !== 1) return undefined;
      const row = versionRow(codeNodeId, next, createdBy, content, at);
      await trx.insertInto('code_node_versions').values(row).execute();
      const node = await trx
        .selectFrom('code_nodes')
        .selectAll()
        .where('id', '=', codeNodeId)
        .executeTakeFirstOrThrow();
      return toVersion(node, row);
    });
  }

  /** The newest version of a code node, or undefined when the id is unknown. */
  async findLatest(codeNodeId: string): Promise<CodeNodeVersion | undefined> {
    const node = await this.db.selectFrom('code_nodes').selectAll().where('id', '=', codeNodeId).executeTakeFirst();
    if (!node) return undefined;
    const row = await this.db
      .selectFrom('code_node_versions')
      .selectAll()
      .where('code_node_id', '=', codeNodeId)
      .where('version_number', '=', node.latest_version_number)
      .executeTakeFirstOrThrow();
    return toVersion(node, row);
  }

  /** One version by its versionId, whichever is newest; what a workflow's code node pins. */
  async findVersion(versionId: string): Promise<CodeNodeVersion | undefined> {
    const row = await this.db
      .selectFrom('code_node_versions')
      .selectAll()
      .where('id', '=', versionId)
      .executeTakeFirst();
    if (!row) return undefined;
    const node = await this.db
      .selectFrom('code_nodes')
      .selectAll()
      .where('id', '=', row.code_node_id)
      .executeTakeFirstOrThrow();
    return toVersion(node, row);
  }

  /**
   * A version only when it belongs to this code node of this organization:
   * what a workflow's `{ code_id, code_version_id }` may run.
   */
  async findVersionIn(
    organizationId: string,
    codeNodeId: string,
    versionId: string,
  ): Promise<CodeNodeVersion | undefined> {
    const version = await this.findVersion(versionId);
    return version && version.id === codeNodeId && version.organizationId === organizationId ? version : undefined;
  }
}
