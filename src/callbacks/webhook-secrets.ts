import { setTimeout as sleep } from 'node:timers/promises';
import { ShortLivedCache, type ShortLivedCacheOptions } from '../caching/short-lived-cache.js';
import type { SecretBox } from '../crypto/secret-box.js';
import type { CallbackRepo, WebhookSecretRow } from '../store/callback-repo.js';
import { forEachRow } from '../store/paging.js';
import { generateWebhookSecret } from './signing.js';

export interface WorkspaceWebhookSecret {
  workspaceId: string;
  secret: string;
  createdAt: string;
  /** Until when the secret before the last rotation is also signed with; null when none. */
  previousValidUntil: string | null;
}

/** ttlMs: how long a workspace's decrypted signing secrets are reused (config callbacks.secretCacheMs, at most 1 s; 0: off). */
export type SecretCacheOptions = ShortLivedCacheOptions;

/** A workspace's secrets as signing needs them: the previous one only if its overlap had not ended when read. */
interface SigningSet {
  current: string;
  previous: { secret: string; until: number } | null;
}

/**
 * rotated_at is stamped before the rotation's UPDATE commits, so a read in
 * another process may begin after it and still see the old secrets, keeping
 * them until that read's start + ttlMs: the margin covers the write's own time.
 */
const handOutMarginMs = 200;

/** The ciphertext is bound to its workspace: a value copied into another row does not decrypt. */
const context = (workspaceId: string) => `webhook-secret:${workspaceId}`;

/**
 * Per-workspace Standard Webhooks signing secrets, created on first use and
 * kept encrypted in the store; plaintext exists only in memory while signing
 * or while answering the workspace's authorized caller.
 *
 * Signing reuses a workspace's decrypted secrets for ttlMs (keyed by workspace
 * id, never logged), which takes a store read and a decryption off every
 * delivery of a busy workspace. A rotation through this process forgets them
 * at once. One made by another process (split roles) reaches this one's cache
 * within ttlMs, so a secret is handed out only once it is ttlMs old: no
 * receiver can know a secret before every process signs with it, and the one
 * it replaces is still honoured for the overlap, so every signature sent
 * verifies both before and after the receiver switches.
 */
export class WebhookSecrets {
  private readonly cache: ShortLivedCache<string, SigningSet>;

  constructor(
    private readonly repo: CallbackRepo,
    private readonly box: SecretBox,
    private readonly rotationOverlapMs: number,
    cacheOptions: SecretCacheOptions = { ttlMs: 0, maxEntries: 0 },
  ) {
    this.cache = new ShortLivedCache(cacheOptions);
  }

  /** The workspace's current secret, created when it has none. */
  async current(workspaceId: string): Promise<WorkspaceWebhookSecret> {
    return this.handOut(workspaceId, await this.row(workspaceId));
  }

  /** The secrets to sign with now: the current one, then the previous one while its overlap lasts. */
  async signingSecrets(workspaceId: string, at = new Date()): Promise<string[]> {
    const { current, previous } = await this.signingSet(workspaceId);
    return previous && previous.until > at.getTime() ? [current, previous.secret] : [current];
  }

  /**
   * Replaces the secret with a new one; the old one keeps being signed with
   * (as a second signature) for the configured overlap, so receivers can
   * switch without dropping callbacks.
   */
  async rotate(workspaceId: string): Promise<WorkspaceWebhookSecret> {
    for (;;) {
      const existing = await this.repo.findWebhookSecret(workspaceId);
      const secret = generateWebhookSecret();
      const ciphertext = this.box.encrypt(secret, context(workspaceId));
      if (!existing) {
        await this.repo.insertWebhookSecret(workspaceId, ciphertext);
      } else {
        const until = new Date(Date.now() + this.rotationOverlapMs).toISOString();
        await this.repo.rotateWebhookSecret(workspaceId, existing.secretCiphertext, ciphertext, until);
      }
      this.cache.delete(workspaceId);
      const stored = await this.repo.findWebhookSecret(workspaceId);
      // Another rotation or first use won the race: go again so the caller gets a secret that is really in force.
      if (stored?.secretCiphertext === ciphertext) return this.handOut(workspaceId, stored);
    }
  }

  /** Re-encrypts every workspace's secrets under the ring's current key (master key rotation); rows changed. */
  async reencryptAll(): Promise<number> {
    let changed = 0;
    await forEachRow(
      (after) => this.repo.webhookSecretPage(after, 100),
      (row) => row.workspaceId,
      async (row) => {
        if (await this.reseal(row)) changed += 1;
      },
    );
    return changed;
  }

  private async reseal(row: WebhookSecretRow): Promise<boolean> {
    const stale = (ciphertext: string | null) => ciphertext !== null && this.box.needsReencryption(ciphertext);
    if (!stale(row.secretCiphertext) && !stale(row.previousSecretCiphertext)) return false;
    const reseal = (ciphertext: string) =>
      this.box.encrypt(this.box.decrypt(ciphertext, context(row.workspaceId)), context(row.workspaceId));
    const previous = row.previousSecretCiphertext === null ? null : reseal(row.previousSecretCiphertext);
    if (await this.repo.replaceWebhookCiphertexts(row, reseal(row.secretCiphertext), previous)) return true;
    // Rotated in between: the fresh row is resealed instead.
    const fresh = await this.repo.findWebhookSecret(row.workspaceId);
    return fresh ? this.reseal(fresh) : false;
  }

  private async signingSet(workspaceId: string): Promise<SigningSet> {
    const hit = this.cache.get(workspaceId);
    if (hit) return hit;
    const read = this.cache.beginRead();
    const row = await this.row(workspaceId);
    const previousUntil = row.previousExpiresAt === null ? 0 : Date.parse(row.previousExpiresAt);
    const set: SigningSet = {
      current: this.box.decrypt(row.secretCiphertext, context(workspaceId)),
      previous:
        row.previousSecretCiphertext && previousUntil > read.at
          ? { secret: this.box.decrypt(row.previousSecretCiphertext, context(workspaceId)), until: previousUntil }
          : null,
    };
    this.cache.set(workspaceId, set, read);
    return set;
  }

  /** The secret for its caller, once every process's cache may hold it (see the class comment). */
  private async handOut(workspaceId: string, row: WebhookSecretRow): Promise<WorkspaceWebhookSecret> {
    const ttlMs = this.cache.ttlMs;
    const wait =
      row.rotatedAt === null || ttlMs <= 0 ? 0 : Date.parse(row.rotatedAt) + ttlMs + handOutMarginMs - Date.now();
    if (wait > 0) await sleep(wait);
    return this.describe(workspaceId, row);
  }

  private async row(workspaceId: string): Promise<WebhookSecretRow> {
    const existing = await this.repo.findWebhookSecret(workspaceId);
    if (existing) return existing;
    await this.repo.insertWebhookSecret(workspaceId, this.box.encrypt(generateWebhookSecret(), context(workspaceId)));
    const created = await this.repo.findWebhookSecret(workspaceId);
    if (!created) throw new Error(`webhook secret for workspace ${workspaceId} vanished after creation`);
    return created;
  }

  private describe(workspaceId: string, row: WebhookSecretRow): WorkspaceWebhookSecret {
    const previousLive =
      row.previousSecretCiphertext && row.previousExpiresAt && Date.parse(row.previousExpiresAt) > Date.now();
    return {
      workspaceId,
      secret: this.box.decrypt(row.secretCiphertext, context(workspaceId)),
      createdAt: row.createdAt,
      previousValidUntil: previousLive ? row.previousExpiresAt : null,
    };
  }
}
