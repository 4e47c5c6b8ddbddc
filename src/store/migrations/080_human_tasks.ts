import { type Kysely } from 'kysely';

/** Human tasks and their history; the inbox lists by organization or workspace, newest or soonest-due first. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('human_tasks')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('case_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('workflow_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('node_id', 'text', (c) => c.notNull())
    .addColumn('node_name', 'text', (c) => c.notNull())
    .addColumn('temporal_workflow_id', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('instructions', 'text', (c) => c.notNull())
    .addColumn('form', 'text', (c) => c.notNull())
    .addColumn('assignee_type', 'text', (c) => c.notNull())
    .addColumn('assignee_value', 'text', (c) => c.notNull())
    .addColumn('claimed_by', 'varchar(36)')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('due_at', 'text')
    .addColumn('due_sort', 'text', (c) => c.notNull())
    .addColumn('escalated', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('outputs', 'text')
    .addColumn('decided_by', 'varchar(36)')
    .addColumn('decided_via', 'text')
    .addColumn('decided_at', 'text')
    .addColumn('link_hash', 'text')
    .addColumn('link_expires_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('human_tasks_org_created')
    .on('human_tasks')
    .columns(['organization_id', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('human_tasks_org_due')
    .on('human_tasks')
    .columns(['organization_id', 'due_sort', 'id'])
    .execute();
  await db.schema.createIndex('human_tasks_case').on('human_tasks').column('case_id').execute();
  await db.schema.createIndex('human_tasks_link').on('human_tasks').column('link_hash').execute();
  await db.schema
    .createTable('human_task_events')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('task_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('actor_user_id', 'varchar(36)')
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('details', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('human_task_events_task').on('human_task_events').columns(['task_id', 'at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('human_task_events').execute();
  await db.schema.dropTable('human_tasks').execute();
}
