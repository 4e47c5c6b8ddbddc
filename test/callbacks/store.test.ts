import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookSecrets } from '../../src/callbacks/webhook-secrets.js';
import { SecretBox } from '../../src/crypto/secret-box.js';
import { CallbackRepo, type DueKeyset } from '../../src/store/callback-repo.js';
import { migrateToLatest, openStore, type Store } from '../../src/store/database.js';
import { TenancyRepo } from '../../src/store/tenancy-repo.js';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres.js';

describe.each(['sqlite', 'postgres'] as const)('callback store on %s', (dialect) => {
  let store: Store;
  let dataDir: string;
  let schema: PostgresSchema | undefined;
  let repo: CallbackRepo;
  let secrets: WebhookSecrets;
  let workspaceId: string;
  const box = new SecretBox([{ id: 'test', key: randomBytes(32) }]);

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'caseflow-callback-store-'));
    schema = dialect === 'postgres' ? await createPostgresSchema() : undefined;
    store = openStore(dataDir, schema?.url);
    await migrateToLatest(store.db);
    const tenancy = new TenancyRepo(store.db);
    const org = await tenancy.createOrganization('Org', true);
    workspaceId = (await tenancy.createWorkspace(org.id, 'WS')).id;
    repo = new CallbackRepo(store.db);
    secrets = new WebhookSecrets(repo, box, 60_000);
  });
  afterAll(async () => {
    await store.close();
    await schema?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('creates one secret however many first uses race', async () => {
    const seen = await Promise.all(Array.from({ length: 8 }, () => secrets.current(workspaceId)));
    expect(new Set(seen.map((s) => s.secret)).size).toBe(1);
    expect(await secrets.signingSecrets(workspaceId)).toEqual([seen[0]!.secret]);
  });

  it('rotations racing each return a secret that was really in force, and the last one wins', async () => {
    const before = (await secrets.current(workspaceId)).secret;
    const rotated = await Promise.all(Array.from({ length: 4 }, () => secrets.rotate(workspaceId)));
    expect(new Set(rotated.map((r) => r.secret)).size).toBe(4);
    const now = await secrets.current(workspaceId);
    expect(rotated.map((r) => r.secret)).toContain(now.secret);
    const signing = await secrets.signingSecrets(workspaceId);
    expect(signing).toHaveLength(2);
    expect(signing[0]).toBe(now.secret);
    expect(signing[1]).not.toBe(now.secret);
    expect([before, ...rotated.map((r) => r.secret)]).toContain(signing[1]);
    // After the overlap the previous secret is no longer signed with.
    expect(await secrets.signingSecrets(workspaceId, new Date(Date.now() + 61_000))).toEqual([now.secret]);
  });

  it('records deliveries idempotently and upserts a repeated attempt', async () => {
    // The case run's own delivery ids are `<caseId>-<status>`, longer than a UUID.
    const caseId = randomUUID();
    const delivery = {
      id: `${caseId}-CANCELLED`,
      caseId,
      workspaceId,
      url: 'http://127.0.0.1:1/hook',
      body: '{"a":1}',
      workflowId: 'wf',
    };
    await repo.createDelivery(delivery);
    await repo.createDelivery({ ...delivery, body: '{"changed":true}' });
    const attempt = {
      deliveryId: delivery.id,
      attempt: 1,
      startedAt: new Date().toISOString(),
      durationMs: 5,
      responseStatus: null,
      responseBody: null,
      error: 'ECONNREFUSED',
    };
    await repo.recordAttempt({ ...attempt, status: 'pending', nextAttemptAt: new Date().toISOString() });
    await repo.recordAttempt({
      ...attempt,
      responseStatus: 200,
      error: null,
      responseBody: 'ok',
      status: 'delivered',
      nextAttemptAt: null,
    });
    const [row] = await repo.listDeliveries(delivery.caseId);
    expect(row).toMatchObject({
      id: delivery.id,
      body: '{"a":1}',
      status: 'delivered',
      attempts: 1,
      nextAttemptAt: null,
    });
    expect((await repo.listAttempts([delivery.id])).get(delivery.id)).toEqual([
      { attempt: 1, startedAt: attempt.startedAt, durationMs: 5, responseStatus: 200, responseBody: 'ok', error: null },
    ]);
  });

  it('pages through pending deliveries overdue before a time, oldest due first, past ties by id', async () => {
    const caseId = randomUUID();
    const make = async (name: string, dueAt: string | null, status: 'pending' | 'delivered' = 'pending') => {
      const id = `${caseId}-${name}`;
      await repo.createDelivery({
        id,
        caseId,
        workspaceId,
        url: 'http://127.0.0.1:1/hook',
        body: '{}',
        workflowId: id,
      });
      if (dueAt !== null || status !== 'pending') {
        await repo.recordAttempt({
          deliveryId: id,
          attempt: 1,
          startedAt: new Date().toISOString(),
          durationMs: 1,
          responseStatus: null,
          responseBody: null,
          error: 'ECONNREFUSED',
          status,
          nextAttemptAt: dueAt,
        });
      }
      return id;
    };
    const at = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();
    const tie = at(-600_000);
    // Written now, so due now: overdue for a cut-off a second ahead.
    const fresh = await make('fresh', null);
    const [tiedA, tiedB] = [await make('tied-a', tie), await make('tied-b', tie)];
    const older = await make('older', at(-900_000));
    await make('later', at(3_600_000));
    await make('delivered', null, 'delivered');
    const mine = (rows: { id: string }[]) => rows.map((r) => r.id).filter((id) => id.startsWith(caseId));

    const cutOff = at(1000);
    expect(mine(await repo.overdueDeliveries(cutOff, undefined, 100))).toEqual([older, tiedA, tiedB, fresh]);
    expect(mine(await repo.overdueDeliveries(at(-60_000), undefined, 100))).toEqual([older, tiedA, tiedB]);
    const walked: string[] = [];
    let after: DueKeyset | undefined;
    for (;;) {
      const page = await repo.overdueDeliveries(cutOff, after, 1);
      const last = page.at(-1);
      if (!last?.nextAttemptAt) break;
      walked.push(last.id);
      after = { dueAt: last.nextAttemptAt, id: last.id };
    }
    expect(walked.filter((id) => id.startsWith(caseId))).toEqual([older, tiedA, tiedB, fresh]);
  });

  it('fails a pending delivery with its reason only as it was read: not once an attempt came in, never a delivered one', async () => {
    const caseId = randomUUID();
    const delivery = (name: string) => ({
      id: `${caseId}-${name}`,
      caseId,
      workspaceId,
      url: 'http://127.0.0.1:1/hook',
      body: '{}',
      workflowId: `event-${caseId}-${name}`,
    });
    for (const name of ['stalled', 'delivered', 'attempted']) await repo.createDelivery(delivery(name));
    const read = async (name: string) => (await repo.findDelivery(`${caseId}-${name}`))!;
    const [stalled, delivered, attempted] = [await read('stalled'), await read('delivered'), await read('attempted')];
    await repo.finishDelivery(delivered.id, 'delivered');
    await repo.recordAttempt({
      deliveryId: attempted.id,
      attempt: 1,
      startedAt: new Date().toISOString(),
      durationMs: 3,
      responseStatus: 500,
      responseBody: null,
      error: 'receiver answered HTTP 500',
      status: 'pending',
      nextAttemptAt: new Date(Date.now() + 1000).toISOString(),
    });
    expect(await repo.failPending(stalled, 'why')).toBe(true);
    expect(await repo.failPending(stalled, 'why')).toBe(false);
    expect(await repo.failPending(delivered, 'why')).toBe(false);
    expect(await repo.failPending(attempted, 'why')).toBe(false);
    expect(await read('stalled')).toMatchObject({ status: 'failed', attempts: 1, nextAttemptAt: null });
    expect((await repo.listAttempts([stalled.id])).get(stalled.id)).toEqual([
      expect.objectContaining({ attempt: 1, responseStatus: null, responseBody: null, error: 'why', durationMs: 0 }),
    ]);
    expect(await read('delivered')).toMatchObject({ status: 'delivered', attempts: 0 });
    expect(await read('attempted')).toMatchObject({ status: 'pending', attempts: 1 });
    expect((await repo.listAttempts([attempted.id])).get(attempted.id)).toEqual([
      expect.objectContaining({ attempt: 1, error: 'receiver answered HTTP 500' }),
    ]);
  });
});
