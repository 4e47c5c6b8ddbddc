import { SqliteAdapter, SqliteDialect, sql, type DialectAdapter, type Kysely, type MigrationLockOptions } from 'kysely';

/**
 * kysely's SQLite adapter runs migrations outside any transaction and locks nothing: a process killed inside a
 * migration leaves it half applied (a column added, not recorded: the next start fails on the duplicate column), and
 * two processes starting on one file at once both run it. SQLite's DDL is transactional, so the migrator here runs
 * every pending migration in one transaction, as it does on Postgres.
 */
class MigratingSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }

  /**
   * The first statement of the migrations' transaction is a write, so it takes SQLite's one write lock at once (what
   * BEGIN IMMEDIATE does): another process migrating waits for it (busy_timeout), then reads what this one committed
   * and finds nothing pending. The write changes nothing; commit or rollback lets the lock go (release stays a no-op).
   */
  override async acquireMigrationLock(db: Kysely<unknown>, options: MigrationLockOptions): Promise<void> {
    await sql`update ${sql.table(options.lockTable)} set is_locked = is_locked where id = ${options.lockRowId}`.execute(
      db,
    );
  }
}

/** kysely's SQLite dialect (better-sqlite3), with migrations atomic and one process at a time migrating a file. */
export class StoreSqliteDialect extends SqliteDialect {
  override createAdapter(): DialectAdapter {
    return new MigratingSqliteAdapter();
  }
}
