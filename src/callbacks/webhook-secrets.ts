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

/** The ciphertext is bound to its workspace: a value copied into another row does not decrypt. */
const context = (workspaceId: string) => `webhook-secret:${workspaceId}`;

/**
 * Per-workspace Standard Webhooks signing secrets, created on first use and
 * kept encrypted in the store; plaintext exists only in memory while signing
 * or while answering the workspace's authorized caller.
 */
export class WebhookSecrets {
  constructor(
    private readonly repo: CallbackRepo,
    private readonly box: SecretBox,
    private readonly rotationOverlapMs: number,
  ) {}

  /** The workspace's current secret, created when it has none. */
  async current(workspaceId: string): Promise<WorkspaceWebhookSecret> {
    return this.describe(workspaceId, await this.row(workspaceId));
  }

  /** The secrets to sign with now: the current one, then the previous one while its overlap lasts. */
  async signingSecrets(workspaceId: string, at = new Date()): Promise<string[]> {
    const row = await this.row(workspaceId);
    const secrets = [this.box.decrypt(row.secretCiphertext, context(workspaceId))];
    if (row.previousSecretCiphertext && row.previousExpiresAt && Date.parse(row.previousExpiresAt) > at.getTime()) {
      secrets.push(this.box.decrypt(row.previousSecretCiphertext, context(workspaceId)));
    }
    return secrets;
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
      const stored = await this.repo.findWebhookSecret(workspaceId);
      // Another rotation or first use won the race: go again so the caller gets a secret that is really in force.
      if (stored?.secretCiphertext === ciphertext) return this.describe(workspaceId, stored);
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
