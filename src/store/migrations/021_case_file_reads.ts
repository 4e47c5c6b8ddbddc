import { type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // What nodes of each case have read so far, for the per-case file limits.
  await db.schema
    .createTable('case_file_reads')
    .addColumn('case_id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('files', 'integer', (c) => c.notNull())
    .addColumn('bytes', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('case_file_reads').execute();
}
