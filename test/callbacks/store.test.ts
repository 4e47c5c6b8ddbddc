import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookSecrets } from '../../src/callbacks/webhook-secrets.js';
import { SecretBox } from '../../src/crypto/secret-box.js';
import { CallbackRepo } from '../../src/store/callback-repo.js';
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
});
