import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest, openStore, pingStore, type Store } from '../../src/store/database.js';
import { TenancyRepo } from '../../src/store/tenancy-repo.js';
import { TenancyService } from '../../src/tenancy/tenancy-service.js';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres.js';
import { secretOf } from '../support/keys.js';

const dialects = ['sqlite', 'postgres'] as const;

describe.each(dialects)('tenancy store on %s', (dialect) => {
  let store: Store;
  let dataDir: string;
  let schema: PostgresSchema | undefined;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'caseflow-store-'));
    if (dialect === 'postgres') schema = await createPostgresSchema();
    store = openStore(dataDir, schema?.url);
    expect(store.dialect).toBe(dialect);
    await migrateToLatest(store.db);
  });
  afterAll(async () => {
    await store.close();
    await schema?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('migrates idempotently and answers a ping', async () => {
    expect(await migrateToLatest(store.db)).toEqual([]);
    await pingStore(store.db);
  });

  it('keeps organizations, workspaces, users, memberships and keys', async () => {
    const repo = new TenancyRepo(store.db);
    const service = new TenancyService(repo);
    const org = await service.createOrganization({ name: 'Acme', verified: false });
    await service.setVerified(org.id, true);
    expect((await repo.findOrganization(org.id))?.verified).toBe(true);
    const ws = await service.createWorkspace(org.id, { name: 'Ops' });
    expect((await repo.findWorkspace(ws.id))?.organizationId).toBe(org.id);
    const user = await service.createUser({
      email: `u-${dialect}@example.com`,
      name: 'U',
      organizationId: org.id,
      role: 'admin',
    });
    expect(await repo.isMember(org.id, user.id)).toBe(true);
    expect((await service.listUsers(org.id)).map((u) => u.id)).toEqual([user.id]);

    const created = await service.createKey({
      organizationId: org.id,
      userId: user.id,
      name: 'ci',
      grants: ['case:full', 'case:full', 'file:read'],
      workspaceIds: [ws.id],
    });
    const stored = await repo.findKey(created.view.id);
    expect(stored?.grants).toEqual(['case:full', 'file:read']);
    expect(stored?.scope).toEqual({ type: 'workspaces', workspaceIds: [ws.id] });
    // Only a hash is stored: the key's secret part appears nowhere in the row.
    expect(JSON.stringify(stored)).not.toContain(secretOf(created.key));

    await service.revokeKey(created.view.id);
    expect((await repo.findKey(created.view.id))?.revokedAt).not.toBeNull();
    await service.removeMember(org.id, user.id);
    expect(await repo.isMember(org.id, user.id)).toBe(false);
  });

  it('bootstraps a default organization exactly once', async () => {
    const freshDir = mkdtempSync(path.join(os.tmpdir(), 'caseflow-boot-'));
    const fresh = openStore(freshDir, undefined);
    await migrateToLatest(fresh.db);
    const service = new TenancyService(new TenancyRepo(fresh.db));
    const first = await service.bootstrap();
    expect(first?.organization.verified).toBe(true);
    expect(first?.key.key).toMatch(/^cf_[0-9a-f]{32}_/);
    expect(await service.bootstrap()).toBeUndefined();
    await fresh.close();
    rmSync(freshDir, { recursive: true, force: true });
  });
});
