import SQLite from 'better-sqlite3';
import { SqliteAdapter, SqliteDialect, sql, type DialectAdapter, type Kysely, type MigrationLockOptions } from 'kysely';

/**
 * The migrations' lock statement waited busy_timeout for another process's write lock (its migrations, most likely)
 * and gave up: the transaction is rolled back, nothing was applied, and trying again later is safe.
 */
export class MigrationLockBusyError extends Error {}

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
   * Past busy_timeout it throws MigrationLockBusyError, for migrateToLatest to wait on.
   */
  override async acquireMigrationLock(db: Kysely<unknown>, options: MigrationLockOptions): Promise<void> {
    try {
      await sql`update ${sql.table(options.lockTable)} set is_locked = is_locked where id = ${options.lockRowId}`.execute(
        db,
      );
    } catch (err) {
      if (err instanceof SQLite.SqliteError && err.code.startsWith('SQLITE_BUSY')) {
        throw new MigrationLockBusyError("another process holds the store's write lock", { cause: err });
      }
      throw err;
    }
  }
}

/** kysely's SQLite dialect (better-sqlite3), with migrations atomic and one process at a time migrating a file. */
export class StoreSqliteDialect extends SqliteDialect {
  override createAdapter(): DialectAdapter {
    return new MigratingSqliteAdapter();
  }
}
