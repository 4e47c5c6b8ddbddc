import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompiledStatement } from '../../src/store/compiled-statement.js';
import { migrateToLatest, openStore, type Db, type Store } from '../../src/store/database.js';
import { TenancyRepo } from '../../src/store/tenancy-repo.js';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres.js';

describe.each(['sqlite', 'postgres'] as const)('a compiled statement on %s', (dialect) => {
  let store: Store;
  let dataDir: string;
  let schema: PostgresSchema | undefined;
  const ids: string[] = [];

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'caseflow-compiled-statement-'));
    schema = dialect === 'postgres' ? await createPostgresSchema() : undefined;
    store = openStore(dataDir, schema?.url);
    await migrateToLatest(store.db);
    const tenancy = new TenancyRepo(store.db);
    for (const name of ['One', 'Two']) ids.push((await tenancy.createOrganization(name, true)).id);
  });
  afterAll(async () => {
    await store.close();
    await schema?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('is built once and binds each run its own values, the fixed ones kept', async () => {
    let builds = 0;
    const rename = new CompiledStatement((db: Db, v: { id: string; name: string }) => {
      builds += 1;
      return db
        .updateTable('organizations')
        .set({ name: v.name })
        .where('id', '=', v.id)
        .where('verified', '=', 1)
        .returning(['id', 'name']);
    });
    const [one, two] = ids as [string, string];
    expect((await rename.run(store.db, { id: one, name: 'First' })).rows).toEqual([{ id: one, name: 'First' }]);
    // In a transaction, and with the values given in another order.
    await store.db.transaction().execute(async (trx) => {
      expect((await rename.run(trx, { name: 'Second', id: two })).rows).toEqual([{ id: two, name: 'Second' }]);
    });
    expect((await rename.run(store.db, { id: 'none', name: 'Nobody' })).rows).toEqual([]);
    expect(builds).toBe(1);
    const names = await store.db.selectFrom('organizations').select(['id', 'name']).orderBy('name').execute();
    expect(names).toEqual([
      { id: one, name: 'First' },
      { id: two, name: 'Second' },
    ]);
  });

  it('refuses a run without one of its values, which would have changed the SQL', async () => {
    const find = new CompiledStatement((db: Db, v: { id: string | undefined }) =>
      db
        .selectFrom('organizations')
        .select('id')
        .where('id', '=', v.id ?? ''),
    );
    expect((await find.run(store.db, { id: ids[0] })).rows).toEqual([{ id: ids[0] }]);
    await expect(find.run(store.db, { id: undefined })).rejects.toThrow(/without a value for id/);
  });

  it('refuses a run with a value its first run lacked, which the SQL would have dropped', async () => {
    const find = new CompiledStatement((db: Db, v: { id: string | undefined; name?: string }) => {
      const query = db
        .selectFrom('organizations')
        .select('id')
        .where('id', '=', v.id ?? '');
      return v.name === undefined ? query : query.where('name', '=', v.name);
    });
    expect((await find.run(store.db, { id: ids[0] })).rows).toEqual([{ id: ids[0] }]);
    await expect(find.run(store.db, { id: ids[0], name: 'Other' })).rejects.toThrow(/not compiled for/);
  });
});
