import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { WebhookSecrets } from '../../src/callbacks/webhook-secrets.js';
import { SecretBox } from '../../src/crypto/secret-box.js';
import { CallbackRepo } from '../../src/store/callback-repo.js';
import { migrateToLatest, openStore, type Store } from '../../src/store/database.js';
import { TenancyRepo } from '../../src/store/tenancy-repo.js';

/** The store reads of secrets, counted. */
class CountingRepo extends CallbackRepo {
  reads = 0;
  override findWebhookSecret(workspaceId: string) {
    this.reads += 1;
    return super.findWebhookSecret(workspaceId);
  }
}

/** Decryptions, counted. */
class CountingBox extends SecretBox {
  decrypts = 0;
  override decrypt(ciphertext: string, context?: string): string {
    this.decrypts += 1;
    return super.decrypt(ciphertext, context);
  }
}

const overlapMs = 60_000;
const ttlMs = 300;

describe('webhook signing secrets cache', () => {
  let store: Store;
  let dataDir: string;
  let tenancy: TenancyRepo;
  let repo: CountingRepo;
  let box: CountingBox;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'caseflow-secret-cache-'));
    store = openStore(dataDir);
    await migrateToLatest(store.db);
    tenancy = new TenancyRepo(store.db);
    repo = new CountingRepo(store.db);
    box = new CountingBox([{ id: 'test', key: randomBytes(32) }]);
  });
  afterAll(async () => {
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const newWorkspace = async () => {
    const org = await tenancy.createOrganization('Org', true);
    return (await tenancy.createWorkspace(org.id, 'WS')).id;
  };
  /** One process's view of the secrets (the API or a worker, in split roles). */
  const process = (ttl = ttlMs) => new WebhookSecrets(repo, box, overlapMs, { ttlMs: ttl, maxEntries: 100 });

  it('signs a busy workspace from one read and one decryption, each workspace its own secret', async () => {
    const [first, second] = [await newWorkspace(), await newWorkspace()];
    const worker = process();
    const [reads, decrypts] = [repo.reads, box.decrypts];
    const signed = await Promise.all(Array.from({ length: 10 }, () => worker.signingSecrets(first)));
    // Concurrent first uses may each read; after that, no read until the entry ages out.
    const afterFirst = [repo.reads - reads, box.decrypts - decrypts];
    for (let i = 0; i < 20; i += 1) expect(await worker.signingSecrets(first)).toEqual(signed[0]);
    expect([repo.reads - reads, box.decrypts - decrypts]).toEqual(afterFirst);
    expect(new Set(signed.map((s) => s.join(' '))).size).toBe(1);

    const other = await worker.signingSecrets(second);
    expect(other).toHaveLength(1);
    expect(other[0]).not.toBe(signed[0]?.[0]);
    expect(await worker.current(second)).toMatchObject({ workspaceId: second, secret: other[0] });

    // Turned off, every signing reads and decrypts again.
    const uncached = process(0);
    const before = repo.reads;
    for (let i = 0; i < 3; i += 1) await uncached.signingSecrets(first);
    expect(repo.reads - before).toBe(3);
  });

  it('a rotation through this process signs with the new secret at once, the previous one for its overlap', async () => {
    const workspaceId = await newWorkspace();
    const worker = process();
    const [old] = await worker.signingSecrets(workspaceId);
    const rotating = worker.rotate(workspaceId);
    // Stored, and still being handed out: deliveries of this process already sign with it.
    await vi.waitFor(async () => expect((await repo.findWebhookSecret(workspaceId))?.rotatedAt).not.toBeNull());
    const during = await worker.signingSecrets(workspaceId);
    const rotated = await rotating;
    expect(during).toEqual([rotated.secret, old]);
    expect(await worker.signingSecrets(workspaceId, new Date(Date.now() + overlapMs + 1000))).toEqual([rotated.secret]);
  });

  it('a rotation by another process: its new secret is handed out only once no cache can still lack it', async () => {
    const workspaceId = await newWorkspace();
    const [api, worker, otherApi] = [process(), process(), process()];
    const [old] = await worker.signingSecrets(workspaceId);
    const rotating = api.rotate(workspaceId);
    // Meanwhile the worker may still sign with the old secret alone: nobody knows the new one yet.
    const rotated = await rotating;
    // The caller has the new secret and may switch its receiver now: every signature from here carries it.
    expect(await worker.signingSecrets(workspaceId)).toEqual([rotated.secret, old]);

    // The same through the read route of a third process, right after a rotation made elsewhere.
    await worker.signingSecrets(workspaceId);
    const row = await repo.findWebhookSecret(workspaceId);
    const next = box.encrypt('whsec_' + randomBytes(24).toString('base64'), `webhook-secret:${workspaceId}`);
    await repo.rotateWebhookSecret(
      workspaceId,
      row!.secretCiphertext,
      next,
      new Date(Date.now() + overlapMs).toISOString(),
    );
    const handedOut = await otherApi.current(workspaceId);
    expect(await worker.signingSecrets(workspaceId)).toEqual([handedOut.secret, rotated.secret]);
  });
});
