import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Migrator, sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/config/paths.js';
import { migrateToLatest, openStore, type Store } from '../../src/store/database.js';
import { migrations } from '../../src/store/migrations/index.js';
import { exited } from '../support/worker-process.js';

const built = (module: string) => JSON.stringify(pathToFileURL(path.join(projectRoot, 'dist/src/store', module)).href);

/**
 * A process on the built store that says `ready` once loaded and waits for a line on its stdin before it opens
 * `dataDir` and runs `migrate` (the body of an async function given `store`, `migrations` and kysely's `Migrator`).
 */
function storeProcess(dataDir: string, migrate: string): { child: ChildProcess; output: () => string } {
  const main = `
    import { createInterface } from 'node:readline';
    import { Migrator } from 'kysely';
    import { migrateToLatest, openStore } from ${built('database.js')};
    import { migrations } from ${built('migrations/index.js')};
    process.stdout.write('ready\\n');
    await new Promise((resolve) => createInterface({ input: process.stdin }).once('line', resolve));
    const store = openStore(${JSON.stringify(dataDir)});
    ${migrate}
    await store.close();
    process.exit(0);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', main], {
    cwd: projectRoot,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { child, output: () => output };
}

const migrationNames = Object.keys(migrations).sort();

describe('migrations on SQLite, across processes', () => {
  let dataDir: string;
  let store: Store | undefined;
  const children: ChildProcess[] = [];

  beforeEach(() => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'caseflow-sqlite-migrations-'));
  });
  afterEach(async () => {
    for (const child of children.splice(0)) {
      child.kill('SIGKILL');
      await exited(child);
    }
    await store?.close();
    store = undefined;
    rmSync(dataDir, { recursive: true, force: true });
  });

  const executed = async (db: Store['db']) =>
    (await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db)).rows.map((r) => r.name);

  it('a process killed inside a migration leaves nothing of it: the next start migrates to the latest', async () => {
    // A store at an older version: the pending set runs from 118 (adds a column, then fills it) on.
    store = openStore(dataDir);
    const olderMigrator = new Migrator({
      db: store.db,
      provider: { getMigrations: () => Promise.resolve(migrations) },
    });
    expect((await olderMigrator.migrateTo('112_cases_status_index')).error).toBeUndefined();
    const older = await executed(store.db);
    await store.close();
    store = undefined;

    // Migration 118 as it is, then the process stops at a known point inside it, the column added.
    const { child, output } = storeProcess(
      dataDir,
      `const inside118 = {
        ...migrations,
        '118_case_call_trees': {
          async up(db) {
            await migrations['118_case_call_trees'].up(db);
            process.stdout.write('inside 118\\n');
            Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
          },
        },
      };
      await new Migrator({ db: store.db, provider: { getMigrations: async () => inside118 } }).migrateToLatest();`,
    );
    children.push(child);
    await expect.poll(output, { timeout: 20_000 }).toContain('ready');
    child.stdin?.write('go\n');
    await expect.poll(output, { timeout: 20_000 }).toContain('inside 118');
    child.kill('SIGKILL');
    await exited(child);

    store = openStore(dataDir);
    const db = store.db;
    const casesColumns = async () =>
      (await sql<{ name: string }>`select name from pragma_table_info('cases')`.execute(db)).rows.map((c) => c.name);
    // Nothing of the killed transaction: not its column, not a record of any migration it ran.
    expect(await casesColumns()).not.toContain('root_case_id');
    expect(await executed(db)).toEqual(older);
    const pending = migrationNames.filter((name) => !older.includes(name));
    expect(pending[0]).toBe('118_case_call_trees');
    expect(await migrateToLatest(db)).toEqual(pending);
    expect(await executed(db)).toEqual(migrationNames);
    expect(await casesColumns()).toContain('root_case_id');
  });

  it('two processes migrating one fresh file at once: both succeed, each migration runs once', async () => {
    const processes = [0, 1].map(() =>
      storeProcess(dataDir, `process.stdout.write(JSON.stringify(await migrateToLatest(store.db)) + '\\n');`),
    );
    children.push(...processes.map((p) => p.child));
    for (const { output } of processes) await expect.poll(output, { timeout: 20_000 }).toContain('ready');
    for (const { child } of processes) child.stdin?.write('go\n');
    await Promise.all(processes.map(({ child }) => exited(child)));

    expect(processes.map(({ child }) => child.exitCode)).toEqual([0, 0]);
    const applied = processes.map(({ output }) => JSON.parse(output().split('\n')[1] ?? '') as string[]);
    // One ran them all; the other, held until the first committed, found nothing pending.
    expect(applied.map((names) => names.length).sort((a, b) => a - b)).toEqual([0, migrationNames.length]);
    expect(applied.flat()).toEqual(migrationNames);
    store = openStore(dataDir);
    expect(await executed(store.db)).toEqual(migrationNames);
  });

  it('a start meeting migrations that hold the write lock past busy_timeout waits for them, saying so', async () => {
    // The last migration takes 8 s (busy_timeout is 5 s) before its transaction commits.
    const last = migrationNames.at(-1) ?? '';
    const slow = storeProcess(
      dataDir,
      `const slowed = {
        ...migrations,
        ${JSON.stringify(last)}: {
          async up(db) {
            await migrations[${JSON.stringify(last)}].up(db);
            process.stdout.write('inside the last\\n');
            Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 8000);
          },
        },
      };
      const { error } = await new Migrator({ db: store.db, provider: { getMigrations: async () => slowed } }).migrateToLatest();
      process.stdout.write(error ? 'failed\\n' : 'migrated\\n');`,
    );
    const waiting = storeProcess(
      dataDir,
      `const applied = await migrateToLatest(store.db, {
        onWaitingForMigrations: () => process.stdout.write('waiting\\n'),
      });
      process.stdout.write(JSON.stringify(applied) + '\\n');`,
    );
    children.push(slow.child, waiting.child);
    for (const { output } of [slow, waiting]) await expect.poll(output, { timeout: 20_000 }).toContain('ready');
    slow.child.stdin?.write('go\n');
    await expect.poll(slow.output, { timeout: 20_000 }).toContain('inside the last');
    waiting.child.stdin?.write('go\n');
    await exited(waiting.child);

    expect(waiting.child.exitCode).toBe(0);
    // Told once (it waited ~8 s, under the 30 s between two tellings), then nothing left to apply.
    expect(waiting.output().split('\n')).toEqual(['ready', 'waiting', '[]', '']);
    await exited(slow.child);
    expect(slow.output()).toContain('migrated');
    store = openStore(dataDir);
    expect(await executed(store.db)).toEqual(migrationNames);
  }, 60_000);
});
