import { type Kysely } from 'kysely';

/**
 * Sub-workflow cases (the call_workflow node kind): a child case names the case and node that
 * started it; a parent's node record names the child case it started.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('cases').addColumn('parent_case_id', 'text').execute();
  await db.schema.alterTable('cases').addColumn('parent_node_id', 'text').execute();
  await db.schema.createIndex('cases_parent_case').on('cases').column('parent_case_id').execute();
  await db.schema.alterTable('case_nodes').addColumn('child_case_id', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('case_nodes').dropColumn('child_case_id').execute();
  await db.schema.dropIndex('cases_parent_case').execute();
  await db.schema.alterTable('cases').dropColumn('parent_node_id').execute();
  await db.schema.alterTable('cases').dropColumn('parent_case_id').execute();
}
