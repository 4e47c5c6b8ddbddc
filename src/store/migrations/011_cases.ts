import { type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('cases')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull().references('organizations.id'))
    .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull().references('workspaces.id'))
    .addColumn('workflow_id', 'varchar(36)', (c) => c.notNull().references('workflows.id'))
    .addColumn('entity_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('workflow_version_id', 'varchar(36)', (c) => c.notNull().references('workflow_versions.id'))
    .addColumn('workflow_version_number', 'integer', (c) => c.notNull())
    .addColumn('title', 'text')
    .addColumn('description', 'text')
    .addColumn('ref_user_id', 'text')
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('web_app_id', 'text')
    .addColumn('workspaces', 'text')
    .addColumn('initial_input', 'text', (c) => c.notNull())
    .addColumn('inputs', 'text')
    .addColumn('callback_url', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('results', 'text')
    .addColumn('deadline_ms', 'integer')
    .addColumn('temporal_workflow_id', 'text')
    .addColumn('temporal_run_id', 'text')
    .addColumn('created_by_key_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('created_by_user_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text')
    .addColumn('finished_at', 'text')
    .execute();
  await db.schema.createIndex('cases_org').on('cases').column('organization_id').execute();
  await db.schema.createIndex('cases_workflow').on('cases').column('workflow_id').execute();
  await db.schema
    .createTable('case_nodes')
    .addColumn('case_id', 'varchar(36)', (c) => c.notNull().references('cases.id'))
    .addColumn('node_id', 'text', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('handler_class', 'text', (c) => c.notNull())
    .addColumn('inputs', 'text')
    .addColumn('outputs', 'text')
    .addColumn('logs', 'text', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('started_at', 'text')
    .addColumn('finished_at', 'text')
    // One record per node of a case: a replayed or retried finalization never records twice.
    .addPrimaryKeyConstraint('case_nodes_pk', ['case_id', 'node_id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('case_nodes').execute();
  await db.schema.dropTable('cases').execute();
}
