import { type Kysely } from 'kysely';

/**
 * Schedules (one Temporal Schedule each, `schedule-<id>`), their firings (one
 * row per firing the worker handled, started or failed), and on cases the
 * schedule that created them and a delayed start's time.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('schedules')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull().references('organizations.id'))
    .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull().references('workspaces.id'))
    .addColumn('workflow_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('workflow_version_id', 'varchar(36)')
    .addColumn('title', 'text')
    .addColumn('spec', 'text', (c) => c.notNull())
    .addColumn('inputs', 'text', (c) => c.notNull())
    .addColumn('callback_url', 'text')
    .addColumn('overlap', 'text', (c) => c.notNull())
    .addColumn('catchup_window_ms', 'integer', (c) => c.notNull())
    .addColumn('paused', 'integer', (c) => c.notNull())
    .addColumn('created_by_key_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('created_by_user_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('schedules_list')
    .on('schedules')
    .columns(['organization_id', 'created_at', 'id'])
    .execute();
  await db.schema
    .createTable('schedule_firings')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('schedule_id', 'varchar(36)', (c) => c.notNull().references('schedules.id').onDelete('cascade'))
    // The Temporal workflow of the firing: one firing row per workflow, whatever its activity's retries.
    .addColumn('temporal_workflow_id', 'varchar(255)', (c) => c.notNull().unique())
    .addColumn('scheduled_at', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('case_id', 'varchar(36)')
    .addColumn('error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('schedule_firings_recent')
    .on('schedule_firings')
    .columns(['schedule_id', 'created_at'])
    .execute();
  await db.schema.alterTable('cases').addColumn('schedule_id', 'varchar(36)').execute();
  await db.schema.alterTable('cases').addColumn('start_at', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('cases').dropColumn('start_at').execute();
  await db.schema.alterTable('cases').dropColumn('schedule_id').execute();
  await db.schema.dropTable('schedule_firings').execute();
  await db.schema.dropTable('schedules').execute();
}
