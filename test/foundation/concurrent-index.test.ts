import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { projectRoot } from '../../src/config/paths.js';
import { migrateToLatest, openStore, type Store } from '../../src/store/database.js';
import { TenancyRepo } from '../../src/store/tenancy-repo.js';
import { createPostgresSchema, postgresBaseUrl, type PostgresSchema } from '../support/postgres.js';

const INDEX = 'callback_deliveries_status_due';
const MIGRATION = '125_callback_deliveries_due_index';
/** The advisory-lock class of the builds (src/store/migrations/concurrent-index.ts). */
const BUILD_LOCK_CLASS = 0x63660125;
/** The lock_timeout of a store whose fill meets a lock held elsewhere. */
const LOCK_TIMEOUT_MS = 1000;
/** The tries of one batch of migration 118's fill and the waits between them (src/store/migrations/118_case_call_trees.ts). */
const BATCH_TRIES = 5;
const BATCH_RETRY_WAITS_MS = 100 + 200 + 300 + 400;

/** Cases as a version before migration 118 wrote them: each with its parent (null: a top-level case). */
type CallTrees = Map<string, string | null>;

/**
 * Call trees, one per `[wide, deep]`: a top-level case, `wide` sub-workflow cases under it, and under the first of
 * them a chain `deep` levels down (two cases a level).
 */
function callTrees(...shapes: Array<[wide: number, deep: number]>): CallTrees {
  const trees: CallTrees = new Map();
  for (const [wide, deep] of shapes) {
    const top = randomUUID();
    trees.set(top, null);
    const under = Array.from({ length: wide }, () => randomUUID());
    for (const id of under) trees.set(id, top);
    let parent = under[0] ?? top;
    for (let level = 0; level < deep; level += 1) {
      const [next, sibling] = [randomUUID(), randomUUID()];
      trees.set(next, parent).set(sibling, parent);
      parent = next;
    }
  }
  return trees;
}

/** Each sub-workflow case's top-level case, found by walking up its parents. */
function topsOf(trees: CallTrees): Map<string, string> {
  const tops = new Map<string, string>();
  for (const [id, parent] of trees) {
    if (parent === null) continue;
    let top = parent;
    for (let above = trees.get(top); above; above = trees.get(top)) top = above;
    tops.set(id, top);
  }
  return tops;
}

describe('an index on a large table, on Postgres (migrations 112, 118, 124, 125)', () => {
  let store: Store;
  let dataDir: string;
  let schema: PostgresSchema;
  let organizationId: string;
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
  /** Cases as a version before migration 118 wrote them, on `client`. */
  const writeCases = async (client: pg.Client, trees: CallTrees) => {
    // Their workflows and versions are not written: the foreign keys go unchecked in this session.
    await client.query('set session_replication_role = replica');
    await client.query(
      `insert into cases (id, organization_id, workspace_id, workflow_id, entity_id, workflow_version_id,
         workflow_version_number, source, initial_input, status, created_by_key_id, created_by_user_id, created_at,
         parent_case_id)
       select id, $3, $4, 'w', 'e', 'v', 1, 'api', '{}', 'COMPLETED', 'k', 'u', now()::text, parent
       from unnest($1::text[], $2::text[]) as t (id, parent)`,
      [[...trees.keys()], [...trees.values()], organizationId, workspaceId],
    );
    await client.query('reset session_replication_role');
  };
  /** The store as it was before migration 118 ran (the column goes, and its index with it), holding just `trees`. */
  const before118 = async (client: pg.Client, trees: CallTrees) => {
    await client.query('delete from cases');
    await client.query('alter table cases drop column root_case_id');
    await client.query('delete from kysely_migration where name = $1', ['118_case_call_trees']);
    await writeCases(client, trees);
  };
  /** The root_case_id of each sub-workflow case in `trees` (null where not filled). */
  const rootsIn = async (client: pg.Client, trees: CallTrees) => {
    const { rows } = await client.query<{ id: string; root: string | null }>(
      'select id, root_case_id as root from cases where id = any($1)',
      [[...trees].filter(([, parent]) => parent !== null).map(([id]) => id)],
    );
    return new Map(rows.map((row) => [row.id, row.root]));
  };
  /** Whether a client session holds or asks, on `table`, the lock of an index build. */
  const buildingOn = async (client: pg.Client, table: string) =>
    (
      await client.query(
        `select 1 from pg_locks join pg_stat_activity using (pid)
         where relation = $1::regclass and mode in ('ShareLock', 'ShareUpdateExclusiveLock')
           and backend_type = 'client backend'`,
        [table],
      )
    ).rowCount !== 0;
  /** Another process's build of `index`: the session advisory lock concurrent-index.ts takes, on `client`. */
  const buildLock = (client: pg.Client, index: string, take: boolean) =>
    client.query(
      `select pg_advisory_${take ? 'lock' : 'unlock'}(${BUILD_LOCK_CLASS}, hashtext(current_schema() || '.' || $1))`,
      [index],
    );
  /**
   * A start of `on` on a store from before migration 118 holding `trees`, held once its migrations have committed
   * (another process builds cases_root): the start, and the release of that hold.
   */
  const upgradeHeldAfter118 = async (admin: pg.Client, trees: CallTrees, on: Store = store) => {
    await before118(admin, trees);
    const other = await session();
    await buildLock(other, 'cases_root', true);
    const waitedFor: string[] = [];
    const migrating = migrateToLatest(on.db, { onWaitingForBuild: (index) => waitedFor.push(index) });
    await expect.poll(() => waitedFor, { timeout: 10_000 }).toEqual(['cases_root']);
    return { migrating, release: () => buildLock(other, 'cases_root', false) };
  };
  /**
   * The last sub-workflow case the fill comes to (it goes in the order of the primary key), locked in a transaction
   * of another session: the fill waits on the batch that holds it. The session, to roll back.
   */
  const holdLastOfFill = async () => {
    const holder = await session();
    await holder.query('begin');
    await holder.query('select id from cases where parent_case_id is not null order by id desc limit 1 for update');
    return holder;
  };
  /** The statement of the fill waiting for a lock, if one is: its session and when it began. */
  const fillWaiting = async (admin: pg.Client) =>
    (
      await admin.query<{ pid: number; began: Date }>(
        `select pid, query_start as began from pg_stat_activity
         where wait_event_type = 'Lock' and query like '%with recursive up (id, ancestor, level)%'`,
      )
    ).rows[0];
  /** The store in the same schema with a role's lock_timeout: a statement waiting on a row lock past it fails. */
  const openStoreWithLockTimeout = () =>
    // The URL's options (its search_path) end it.
    openStore(dataDir, `${schema.url}${encodeURIComponent(` -c lock_timeout=${LOCK_TIMEOUT_MS}`)}`);
  /**
   * The store before migration 125, and a writer's transaction open on the table when its build begins: any build of
   * the index waits for it to end. The writer's session, to commit.
   */
  const before125WithWriterOpen = async (admin: pg.Client) => {
    await before125(admin);
    const open = await session();
    await open.query('begin');
    await insertDelivery(open);
    return open;
  };
  /** A fill stopped with `filled` of `trees` filled and no index: the next start fills the rest and builds it. */
  const expectFinishedAtNextStart = async (admin: pg.Client, trees: CallTrees, filled: number) => {
    expect([...(await rootsIn(admin, trees)).values()].filter((root) => root !== null)).toHaveLength(filled);
    expect(await indexState(admin, 'cases_root')).toBeUndefined();
    expect(await migrateToLatest(store.db)).toEqual(['index cases_root (built concurrently)']);
    expect(await rootsIn(admin, trees)).toEqual(topsOf(trees));
    expect(await indexState(admin, 'cases_root')).toMatchObject({ valid: true });
  };
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
    organizationId = (await tenancy.createOrganization('Org', true)).id;
    workspaceId = (await tenancy.createWorkspace(organizationId, 'WS')).id;
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.end()));
    await store.close();
    await schema.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('is built while the table takes writes: one waiting on the build is not held behind it', async () => {
    const admin = await session();
    const open = await before125WithWriterOpen(admin);
    let migrated: Promise<string[]> | undefined;
    try {
      migrated = migrateToLatest(store.db);
      // The build has begun: another session holds or asks a lock on the table to build its index.
      await expect.poll(() => buildingOn(admin, 'callback_deliveries'), { interval: 50, timeout: 30_000 }).toBe(true);
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

  it("is built with the role's lock_timeout off: it waits for a writer's transaction open longer than that", async () => {
    const admin = await session();
    const open = await before125WithWriterOpen(admin);
    const timed = openStoreWithLockTimeout();
    try {
      const migrated = migrateToLatest(timed.db);
      await expect.poll(() => buildingOn(admin, 'callback_deliveries'), { interval: 50, timeout: 30_000 }).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 2 * LOCK_TIMEOUT_MS));
      await open.query('commit');
      expect(await migrated).toEqual([MIGRATION, `index ${INDEX} (built concurrently)`]);
      expect(await indexState(admin)).toMatchObject({ valid: true });
    } finally {
      await timed.close();
    }
  }, 60_000);

  it('says so every 30 s while the build waits for a transaction open on its table', async () => {
    const admin = await session();
    const open = await before125WithWriterOpen(admin);
    const waits: string[] = [];
    const migrated = migrateToLatest(store.db, { onWaitingForBuild: (index, on) => waits.push(`${on}: ${index}`) });
    await expect.poll(() => waits, { interval: 500, timeout: 40_000 }).toEqual([`open transactions: ${INDEX}`]);
    await open.query('commit');
    expect(await migrated).toEqual([MIGRATION, `index ${INDEX} (built concurrently)`]);
    expect(waits).toEqual([`open transactions: ${INDEX}`]);
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

  it("looks for the index in the store's schema only: one of that name in another schema on the search_path is not it", async () => {
    const admin = await session();
    await before125(admin);
    const elsewhere = await createPostgresSchema();
    const other = new pg.Client({ connectionString: elsewhere.url });
    await other.connect();
    clients.push(other);
    await other.query(`create table callback_deliveries (status text)`);
    await other.query(`create index ${INDEX} on callback_deliveries (status)`);
    const names = async (client: pg.Client) =>
      (await client.query<{ name: string }>('select current_schema() as name')).rows[0]?.name;
    const searchPath = `-c search_path=${await names(admin)},${await names(other)}`;
    const sharing = openStore(dataDir, `${postgresBaseUrl}?options=${encodeURIComponent(searchPath)}`);
    try {
      expect(await migrateToLatest(sharing.db)).toEqual([MIGRATION, `index ${INDEX} (built concurrently)`]);
      expect(await indexState(admin)).toMatchObject({ valid: true });
    } finally {
      await sharing.close();
      await elsewhere.drop();
    }
  }, 60_000);

  it('says so while it waits for another process building the same index, and builds it once that one is done', async () => {
    const admin = await session();
    await before125(admin);
    // Another process's build: the same session advisory lock (concurrent-index.ts's class and key).
    const other = await session();
    await buildLock(other, INDEX, true);
    const waitedFor: string[] = [];
    const migrating = migrateToLatest(store.db, { onWaitingForBuild: (index) => waitedFor.push(index) });
    await expect.poll(() => waitedFor, { timeout: 10_000 }).toEqual([INDEX]);
    expect(await indexState(admin)).toBeUndefined();
    await buildLock(other, INDEX, false);
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
    await buildLock(other, 'cases_status_id', true);
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
    await buildLock(other, 'cases_status_id', false);
    expect(await exited).toBe(0);
    expect(JSON.parse(stdout)).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'Org' })]));
    expect(await indexState(admin, 'cases_status_id')).toMatchObject({ valid: true });
  }, 60_000);

  it('migration 118 on a store from before it: the column in the migration, its fill and index after it commits, cases written to throughout', async () => {
    const admin = await session();
    const trees = callTrees([2, 4], [700, 2]);
    const { migrating, release } = await upgradeHeldAfter118(admin, trees);
    // The migrations have committed: the column is there, nothing filled in them.
    expect([...(await rootsIn(admin, trees)).values()].every((root) => root === null)).toBe(true);
    // A writer whose transaction is open when the build begins: the build waits for it to end.
    const open = await session();
    await open.query('begin');
    await writeCases(open, new Map([[randomUUID(), null]]));
    try {
      await release();
      await expect.poll(() => buildingOn(admin, 'cases'), { interval: 50, timeout: 30_000 }).toBe(true);
      const writer = await session();
      await writer.query('set statement_timeout = 5000');
      await writeCases(writer, new Map([[randomUUID(), null]]));
    } finally {
      await open.query('commit');
    }
    expect(await migrating).toEqual(['118_case_call_trees', 'index cases_root (built concurrently)']);
    expect(await indexState(admin, 'cases_root')).toMatchObject({
      valid: true,
      definition: expect.stringContaining('(root_case_id)'),
    });
    expect(await rootsIn(admin, trees)).toEqual(topsOf(trees));
  }, 60_000);

  it("migration 118's fill cut short goes on where it stopped at the next start", async () => {
    const admin = await session();
    const trees = callTrees([1200, 3]);
    const { migrating, release } = await upgradeHeldAfter118(admin, trees);
    // The fill fills two batches and waits on the third.
    const holder = await holdLastOfFill();
    await release();
    const { pid } = await vi.waitUntil(() => fillWaiting(admin), { interval: 50, timeout: 30_000 });
    // Cut short there (as a timeout or the end of its process would): that batch is undone, the two before it stay.
    await admin.query('select pg_cancel_backend($1)', [pid]);
    await expect(migrating).rejects.toThrow(/canceling statement due to user request/);
    await holder.query('rollback');
    await expectFinishedAtNextStart(admin, trees, 1000);
  }, 60_000);

  /**
   * A start with the role's lock_timeout on a store from before migration 118, released with the last sub-workflow
   * case locked elsewhere: its fill fills one batch and waits on the second, each try of which fails once its wait
   * passes the lock_timeout. `check` runs meanwhile.
   */
  const fillHeldPastLockTimeout = async (
    check: (fill: {
      admin: pg.Client;
      trees: CallTrees;
      migrating: Promise<string[]>;
      holder: pg.Client;
      releasedAt: number;
    }) => Promise<void>,
  ) => {
    const admin = await session();
    const trees = callTrees([600, 1]);
    const timed = openStoreWithLockTimeout();
    try {
      const { migrating, release } = await upgradeHeldAfter118(admin, trees, timed);
      const holder = await holdLastOfFill();
      const releasedAt = performance.now();
      await release();
      await check({ admin, trees, migrating, holder, releasedAt });
    } finally {
      await timed.close();
    }
  };

  it(
    "migration 118's fill tries a batch again when it met a lock past the role's lock_timeout, and finishes",
    () =>
      fillHeldPastLockTimeout(async ({ admin, trees, migrating, holder }) => {
        const first = await vi.waitUntil(() => fillWaiting(admin), { interval: 20, timeout: 30_000 });
        // The same batch waits again, in a statement of its own: the first try failed and the fill did not stop.
        await expect
          .poll(async () => (await fillWaiting(admin))?.began.getTime(), { interval: 20, timeout: 30_000 })
          .toBeGreaterThan(first.began.getTime());
        await holder.query('rollback');
        expect(await migrating).toEqual(['118_case_call_trees', 'index cases_root (built concurrently)']);
        expect(await rootsIn(admin, trees)).toEqual(topsOf(trees));
        expect(await indexState(admin, 'cases_root')).toMatchObject({ valid: true });
      }),
    60_000,
  );

  it(
    "migration 118's fill gives up on a batch whose lock is never released, after its tries, saying so",
    () =>
      fillHeldPastLockTimeout(async ({ admin, trees, migrating, holder, releasedAt }) => {
        await expect(migrating).rejects.toThrow(
          /gave up on a batch after 5 tries, each stopped by a lock held elsewhere \(the last: canceling statement due to lock timeout\)/,
        );
        // Each try waited its lock_timeout out, and the fill waited between them.
        expect(performance.now() - releasedAt).toBeGreaterThanOrEqual(
          BATCH_TRIES * LOCK_TIMEOUT_MS + BATCH_RETRY_WAITS_MS,
        );
        await holder.query('rollback');
        // The batch before it stays filled.
        await expectFinishedAtNextStart(admin, trees, 500);
      }),
    60_000,
  );

  it('a store that ran migration 118 already is left as it is, its index built plain or concurrently', async () => {
    const admin = await session();
    // As the earlier 118 left it: its own tree filled and indexed in the migration.
    const trees = callTrees([3, 3]);
    await writeCases(admin, trees);
    for (const [id, root] of topsOf(trees))
      await admin.query('update cases set root_case_id = $2 where id = $1', [id, root]);
    await admin.query('drop index cases_root');
    await admin.query('create index cases_root on cases (root_case_id)');
    const state = async () => ({
      rows: (await admin.query('select id, xmin::text, root_case_id from cases order by id')).rows,
      index: (await admin.query("select 'cases_root'::regclass::oid as oid")).rows,
    });
    const before = await state();
    expect(
      before.rows.filter((row: { root_case_id: string | null }) => row.root_case_id !== null).length,
    ).toBeGreaterThanOrEqual(topsOf(trees).size);
    expect(await migrateToLatest(store.db)).toEqual([]);
    expect(await state()).toEqual(before);
  }, 60_000);
});
