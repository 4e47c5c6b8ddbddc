import { type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('files')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull().references('organizations.id'))
    .addColumn('workspace_id', 'varchar(36)', (c) => c.references('workspaces.id'))
    .addColumn('workflow_id', 'varchar(36)')
    .addColumn('uploaded_by', 'varchar(36)', (c) => c.references('users.id'))
    .addColumn('access_scope', 'text', (c) => c.notNull())
    .addColumn('listed', 'integer', (c) => c.notNull())
    .addColumn('extension', 'text', (c) => c.notNull())
    .addColumn('original_name', 'text')
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('size_bytes', 'integer')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('storage_key', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('upload_expires_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('uploaded_at', 'text')
    .execute();
  // The library listing: an organization's listed, uploaded files, newest first.
  await db.schema
    .createIndex('files_library')
    .on('files')
    .columns(['organization_id', 'listed', 'status', 'created_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('files').execute();
}
