import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretBox } from '../../src/crypto/secret-box.js';
import { CallbackRepo } from '../../src/store/callback-repo.js';
import { migrateToLatest, openStore, type Store } from '../../src/store/database.js';
import { SubscriptionRepo } from '../../src/store/subscription-repo.js';
import { TenancyRepo } from '../../src/store/tenancy-repo.js';
import { SubscriptionSecrets } from '../../src/subscriptions/subscription-secrets.js';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres.js';

describe.each(['sqlite', 'postgres'] as const)('subscription store on %s', (dialect) => {
  let store: Store;
  let dataDir: string;
  let schema: PostgresSchema | undefined;
  let repo: SubscriptionRepo;
  let callbacks: CallbackRepo;
  let secrets: SubscriptionSecrets;
  let organizationId: string;
  let workspaceId: string;
  const box = new SecretBox([{ id: 'test', key: randomBytes(32) }]);

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'caseflow-subscription-store-'));
    schema = dialect === 'postgres' ? await createPostgresSchema() : undefined;
    store = openStore(dataDir, schema?.url);
    await migrateToLatest(store.db);
    const tenancy = new TenancyRepo(store.db);
    organizationId = (await tenancy.createOrganization('Org', true)).id;
    workspaceId = (await tenancy.createWorkspace(organizationId, 'WS')).id;
    repo = new SubscriptionRepo(store.db);
    callbacks = new CallbackRepo(store.db);
    secrets = new SubscriptionSecrets(repo, box, 60_000);
  });
  afterAll(async () => {
    await store.close();
    await schema?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function create(enabled: boolean, eventTypes = ['case.failed']) {
    const id = randomUUID();
    const { secret, ciphertext } = secrets.create(id);
    const subscription = await repo.create(
      {
        id,
        organizationId,
        workspaceId,
        url: 'https://example.com/hook',
        eventTypes,
        description: null,
        enabled,
        createdByKeyId: null,
        secretCiphertext: ciphertext,
      },
      100,
    );
    if (subscription === 'full') throw new Error('the workspace holds 100 subscriptions');
    return { subscription, secret };
  }

  it('keeps the secret encrypted, signs with it, and overlaps the old one after a rotation', async () => {
    const { subscription, secret } = await create(true);
    const row = await store.db
      .selectFrom('event_subscriptions')
      .selectAll()
      .where('id', '=', subscription.id)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(secret.slice(6));
    expect(await secrets.signingSecrets(subscription.id, new Date())).toEqual([secret]);
    const rotations = await Promise.all([secrets.rotate(subscription.id), secrets.rotate(subscription.id)]);
    const signing = await secrets.signingSecrets(subscription.id, new Date());
    // Two rotations racing: each caller got a secret that was in force; the last one signs first.
    expect(signing).toHaveLength(2);
    expect(rotations.map((r) => r?.secret)).toContain(signing?.[0]);
    expect(await secrets.signingSecrets(subscription.id, new Date(Date.now() + 120_000))).toEqual([signing?.[0]]);
  });

  it("lists newest first in pages, finds a workspace's enabled ones, updates and deletes", async () => {
    const off = await create(false, ['case.completed']);
    // Newest first is by creation time, ids breaking ties: a later millisecond makes `on` the newer one.
    await new Promise((resolve) => setTimeout(resolve, 5));
    const on = await create(true, ['case.completed', 'case.failed']);
    const page = await repo.list({ organizationId, workspaceIds: [workspaceId], limit: 1 });
    expect(page.items.map((s) => s.id)).toEqual([on.subscription.id]);
    expect(page.nextCursor).not.toBeNull();
    const enabled = (await repo.listEnabled(workspaceId)).map((s) => s.id);
    expect(enabled).toContain(on.subscription.id);
    expect(enabled).not.toContain(off.subscription.id);
    const updated = await repo.update(off.subscription.id, { enabled: true, eventTypes: ['case.timed_out'] });
    expect(updated).toMatchObject({ enabled: true, eventTypes: ['case.timed_out'] });
    await repo.delete(off.subscription.id);
    expect(await repo.find(off.subscription.id)).toBeUndefined();
    expect(await secrets.signingSecrets(off.subscription.id, new Date())).toBeUndefined();
  });

  it("keeps a subscription's deliveries apart from the case's own callbacks", async () => {
    const { subscription } = await create(true);
    const caseId = randomUUID();
    const event = { caseId, workspaceId, url: 'https://example.com/hook', body: '{}' };
    await callbacks.createDelivery({ ...event, id: `${caseId}-own`, workflowId: `case-${caseId}` });
    const deliveryId = `${caseId}-${subscription.id}`;
    await callbacks.createDelivery({
      ...event,
      id: deliveryId,
      workflowId: `event-${deliveryId}`,
      subscriptionId: subscription.id,
    });
    expect((await callbacks.listDeliveries(caseId)).map((d) => d.id)).toEqual([`${caseId}-own`]);
    expect((await callbacks.unstartedEventDeliveries(caseId)).map((d) => d.id)).toEqual([deliveryId]);
    const page = await callbacks.listSubscriptionDeliveries(subscription.id, undefined, 10);
    expect(page.items.map((d) => ({ id: d.id, subscriptionId: d.subscriptionId }))).toEqual([
      { id: deliveryId, subscriptionId: subscription.id },
    ]);
    await callbacks.recordAttempt({
      deliveryId,
      attempt: 1,
      startedAt: new Date().toISOString(),
      durationMs: 3,
      responseStatus: 200,
      responseBody: 'ok',
      error: null,
      status: 'delivered',
      nextAttemptAt: null,
    });
    expect(await callbacks.unstartedEventDeliveries(caseId)).toEqual([]);
  });
});
