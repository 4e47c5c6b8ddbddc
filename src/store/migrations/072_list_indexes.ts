import { type Kysely } from 'kysely';

/**
 * Indexes for the workflow and case lists (newest first, keyset pages on
 * created_at and id): each filter the lists take leads an index that ends in
 * the sort key, so a page is a range scan. They replace the single-column
 * indexes they start with.
 */
const lists: Array<{ name: string; table: string; columns: string[]; replaces?: string }> = [
  {
    name: 'cases_org_created',
    table: 'cases',
    columns: ['organization_id', 'created_at', 'id'],
    replaces: 'cases_org',
  },
  {
    name: 'cases_workflow_created',
    table: 'cases',
    columns: ['workflow_id', 'created_at', 'id'],
    replaces: 'cases_workflow',
  },
  { name: 'cases_workspace_created', table: 'cases', columns: ['workspace_id', 'created_at', 'id'] },
  { name: 'cases_org_status_created', table: 'cases', columns: ['organization_id', 'status', 'created_at', 'id'] },
  {
    name: 'workflows_org_created',
    table: 'workflows',
    columns: ['organization_id', 'created_at', 'id'],
    replaces: 'workflows_org',
  },
  {
    name: 'workflows_workspace_created',
    table: 'workflows',
    columns: ['workspace_id', 'created_at', 'id'],
    replaces: 'workflows_workspace',
  },
  // "Has an active version" for the workflow list's status filter.
  { name: 'workflow_versions_status', table: 'workflow_versions', columns: ['workflow_id', 'status'] },
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const index of lists) {
    await db.schema.createIndex(index.name).on(index.table).columns(index.columns).execute();
    if (index.replaces) await db.schema.dropIndex(index.replaces).execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const index of lists.toReversed()) {
    if (index.replaces)
      await db.schema
        .createIndex(index.replaces)
        .on(index.table)
        .column(index.columns[0] ?? '')
        .execute();
    await db.schema.dropIndex(index.name).execute();
  }
}
