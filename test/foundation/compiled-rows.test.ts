import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompiledRows } from '../../src/store/compiled-rows.js';
import { migrateToLatest, openStore, type Db, type Store } from '../../src/store/database.js';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres.js';

interface Row {
  id: string;
  name: string;
  verified: number;
  created_at: string;
}

const row = (id: string, verified = 1): Row => ({
  id,
  name: `Org ${id}`,
  verified,
  created_at: '2026-11-26T15:00:00Z',
});

describe.each(['sqlite', 'postgres'] as const)('compiled rows on %s', (dialect) => {
  let store: Store;
  let dataDir: string;
  let schema: PostgresSchema | undefined;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'caseflow-compiled-rows-'));
    schema = dialect === 'postgres' ? await createPostgresSchema() : undefined;
    store = openStore(dataDir, schema?.url);
    await migrateToLatest(store.db);
  });
  afterAll(async () => {
    await store.close();
    await schema?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** An insert of organizations that records the row count of each build. */
  const countingInsert = () => {
    const built: number[] = [];
    const insert = new CompiledRows((db: Db, rows: Row[]) => {
      built.push(rows.length);
      return db
        .insertInto('organizations')
        .values(rows)
        .onConflict((oc) => oc.column('id').doNothing());
    });
    return { built, insert };
  };
  const names = () => store.db.selectFrom('organizations').select(['id', 'name', 'verified']).orderBy('id').execute();

  it('is built once per row count and writes each run its own rows, the fixed parts kept', async () => {
    const { built, insert } = countingInsert();
    await insert.run(store.db, [row('a1'), row('a2', 0)]);
    await store.db.transaction().execute(async (trx) => {
      await insert.run(trx, [row('b1'), row('b2')]);
    });
    await insert.run(store.db, [row('c1')]);
    // The conflict clause came with the first build: a row written before is left as it was.
    await insert.run(store.db, [{ ...row('a1'), name: 'Renamed' }, row('c2', 0)]);
    expect(built).toEqual([2, 1]);
    expect(await names()).toEqual([
      { id: 'a1', name: 'Org a1', verified: 1 },
      { id: 'a2', name: 'Org a2', verified: 0 },
      { id: 'b1', name: 'Org b1', verified: 1 },
      { id: 'b2', name: 'Org b2', verified: 1 },
      { id: 'c1', name: 'Org c1', verified: 1 },
      { id: 'c2', name: 'Org c2', verified: 0 },
    ]);
  });

  it('keeps the statements of the 16 counts last compiled', async () => {
    const { built, insert } = countingInsert();
    const rowsOf = (count: number) => Array.from({ length: count }, (_, i) => row(`e${i}`));
    for (let count = 1; count <= 17; count += 1) await insert.run(store.db, rowsOf(count));
    await insert.run(store.db, rowsOf(17));
    await insert.run(store.db, rowsOf(1));
    expect(built).toEqual([...Array.from({ length: 17 }, (_, i) => i + 1), 1]);
  });

  it('refuses rows whose fields differ from the first run of their count, which would change the SQL', async () => {
    const insert = new CompiledRows((db: Db, rows: Row[]) => db.insertInto('organizations').values(rows));
    await insert.run(store.db, [row('d1')]);
    // What a caller could pass through a looser type: a row without a field, a row with one more.
    const withoutVerified = { id: 'd2', name: 'Org d2', created_at: '2026-11-26T15:00:00Z' } as Row;
    await expect(insert.run(store.db, [withoutVerified])).rejects.toThrow(/without a value for 0\.verified/);
    const withExtra: Row = Object.assign(row('d3'), { extra: 1 });
    await expect(insert.run(store.db, [withExtra])).rejects.toThrow(/not compiled for/);
  });
});
