import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/config/paths.js';
import { migrateToLatest, openStore, type Store } from '../../src/store/database.js';
import { TenancyRepo } from '../../src/store/tenancy-repo.js';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres.js';

const INDEX = 'callback_deliveries_status_due';
const MIGRATION = '125_callback_deliveries_due_index';
/** The advisory-lock class of the builds (src/store/migrations/concurrent-index.ts). */
const BUILD_LOCK_CLASS = 0x63660125;

describe('an index on a large table, on Postgres (migrations 112, 124, 125)', () => {
  let store: Store;
  let dataDir: string;
  let schema: PostgresSchema;
  let workspaceId: string;
  const clients: pg.Client[] = [];

  /** A connection of the test's own, in the store's schema. */
  const session = async () => {
    const client = new pg.Client({ connectionString: schema.url });
    await client.connect();
    clients.push(client);
    return client;
  };
  /** A pending delivery's row, inserted on `client`. */
  const insertDelivery = (client: pg.Client) => {
    const at = new Date().toISOString();
    return client.query(
      `insert into callback_deliveries (id, case_id, workspace_id, url, body, status, attempts, next_attempt_at,
         workflow_id, created_at, updated_at) values ($1, $2, $3, 'http://127.0.0.1:1/', '{}', 'pending', 0, $4, 'w', $4, $4)`,
      [randomUUID(), randomUUID(), workspaceId, at],
    );
  };
  const indexState = async (client: pg.Client, name = INDEX) =>
    (
      await client.query<{ valid: boolean; definition: string }>(
        'select indisvalid as valid, pg_get_indexdef(indexrelid) as definition from pg_index where indexrelid = to_regclass($1)',
        [name],
      )
    ).rows[0];
  /** The store as it was before migration 125 ran. */
  const before125 = async (client: pg.Client) => {
    await client.query(`drop index ${INDEX}`);
    await client.query('delete from kysely_migration where name = $1', [MIGRATION]);
  };

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'caseflow-concurrent-index-'));
    schema = await createPostgresSchema();
    store = openStore(dataDir, schema.url);
    await migrateToLatest(store.db);
    const tenancy = new TenancyRepo(store.db);
    workspaceId = (await tenancy.createWorkspace((await tenancy.createOrganization('Org', true)).id, 'WS')).id;
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.end()));
    await store.close();
    await schema.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('is built while the table takes writes: one waiting on the build is not held behind it', async () => {
    const admin = await session();
    await before125(admin);
    // A writer whose transaction is open when the build begins: any build of the index waits for it to end.
    const open = await session();
    await open.query('begin');
    await insertDelivery(open);
    let migrated: Promise<string[]> | undefined;
    try {
      migrated = migrateToLatest(store.db);
      // The build has begun: another session holds or asks a lock on the table to build its index.
      const { rows } = await admin.query<{ oid: number }>("select 'callback_deliveries'::regclass::oid as oid");
      for (;;) {
        const building = await admin.query(
          `select 1 from pg_locks join pg_stat_activity using (pid)
           where relation = $1 and mode in ('ShareLock', 'ShareUpdateExclusiveLock') and backend_type = 'client backend'`,
          [rows[0]?.oid],
        );
        if (building.rowCount) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // A plain CREATE INDEX waits for a lock that holds every later write behind it; a concurrent build does not.
      const writer = await session();
      await writer.query('set statement_timeout = 5000');
      await insertDelivery(writer);
    } finally {
      await open.query('commit');
    }
    expect(await migrated).toEqual([MIGRATION, `index ${INDEX} (built concurrently)`]);
    expect(await indexState(admin)).toMatchObject({ valid: true });
  }, 60_000);

  it('rebuilds an index a failed build left invalid, and leaves a valid one alone', async () => {
    const admin = await session();
    await before125(admin);
    await insertDelivery(admin);
    // A concurrent build that fails (here on its expression) leaves the index behind, invalid.
    await expect(
      admin.query(`create index concurrently ${INDEX} on callback_deliveries ((1 / (attempts - attempts)))`),
    ).rejects.toThrow(/division by zero/);
    expect(await indexState(admin)).toMatchObject({ valid: false });
    expect(await migrateToLatest(store.db)).toEqual([MIGRATION, `index ${INDEX} (built concurrently)`]);
    expect(await indexState(admin)).toMatchObject({
      valid: true,
      definition: expect.stringContaining('(status, next_attempt_at, id)'),
    });
    expect(await migrateToLatest(store.db)).toEqual([]);
  }, 60_000);

  it('says so while it waits for another process building the same index, and builds it once that one is done', async () => {
    const admin = await session();
    await before125(admin);
    // Another process's build: the same session advisory lock (concurrent-index.ts's class and key).
    const other = await session();
    await other.query(`select pg_advisory_lock(${BUILD_LOCK_CLASS}, hashtext(current_schema() || '.' || $1))`, [INDEX]);
    const waitedFor: string[] = [];
    const migrating = migrateToLatest(store.db, (index) => waitedFor.push(index));
    await expect.poll(() => waitedFor, { timeout: 10_000 }).toEqual([INDEX]);
    expect(await indexState(admin)).toBeUndefined();
    await other.query(`select pg_advisory_unlock(${BUILD_LOCK_CLASS}, hashtext(current_schema() || '.' || $1))`, [
      INDEX,
    ]);
    expect(await migrating).toEqual([MIGRATION, `index ${INDEX} (built concurrently)`]);
    expect(waitedFor).toEqual([INDEX]);
    expect(await indexState(admin)).toMatchObject({ valid: true });
  }, 60_000);

  it('builds the earlier indexes on cases (migrations 112 and 124) the same way on a store upgraded from before them', async () => {
    const admin = await session();
    const onCases = { cases_status_id: '112_cases_status_index', cases_started: '124_cases_started_index' };
    for (const [index, migration] of Object.entries(onCases)) {
      await admin.query(`drop index ${index}`);
      await admin.query('delete from kysely_migration where name = $1', [migration]);
    }
    expect(await migrateToLatest(store.db)).toEqual([
      '112_cases_status_index',
      '124_cases_started_index',
      'index cases_status_id (built concurrently)',
      'index cases_started (built concurrently)',
    ]);
    expect(await indexState(admin, 'cases_status_id')).toMatchObject({
      valid: true,
      definition: expect.stringContaining('(status, id)'),
    });
    expect(await indexState(admin, 'cases_started')).toMatchObject({
      valid: true,
      definition: expect.stringContaining('(started_at)'),
    });
    // Built concurrently by this version, or plain by an earlier one: a valid index is left alone.
    expect(await migrateToLatest(store.db)).toEqual([]);
    await admin.query('drop index cases_started');
    await admin.query('create index cases_started on cases (started_at)');
    expect(await migrateToLatest(store.db)).toEqual([]);
  }, 60_000);

  it('an operator command run during the build says on stderr what it waits for, then does its work', async () => {
    const admin = await session();
    await admin.query('drop index cases_status_id');
    await admin.query('delete from kysely_migration where name = $1', ['112_cases_status_index']);
    const other = await session();
    const lock = `${BUILD_LOCK_CLASS}, hashtext(current_schema() || '.' || $1)`;
    await other.query(`select pg_advisory_lock(${lock})`, ['cases_status_id']);
    const command = spawn('node', [path.join(projectRoot, 'dist/src/cli/main.js'), 'org', 'list'], {
      env: { ...process.env, CASEFLOW_DATA_DIR: dataDir, DATABASE_URL: schema.url },
    });
    let stderr = '';
    let stdout = '';
    command.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    command.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => command.on('exit', resolve));
    await expect
      .poll(() => stderr, { timeout: 20_000 })
      .toContain("waiting for another process to finish building the store's index cases_status_id");
    await other.query(`select pg_advisory_unlock(${lock})`, ['cases_status_id']);
    expect(await exited).toBe(0);
    expect(JSON.parse(stdout)).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'Org' })]));
    expect(await indexState(admin, 'cases_status_id')).toMatchObject({ valid: true });
  }, 60_000);
});
