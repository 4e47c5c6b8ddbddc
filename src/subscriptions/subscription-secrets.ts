import { generateWebhookSecret } from '../callbacks/signing.js';
import { resealAll } from '../crypto/reseal.js';
import type { SecretBox } from '../crypto/secret-box.js';
import type { SubscriptionRepo } from '../store/subscription-repo.js';

/** The ciphertext is bound to its subscription: a value copied into another row does not decrypt. */
const context = (subscriptionId: string) => `event-subscription-secret:${subscriptionId}`;

export interface NewSubscriptionSecret {
  secret: string;
  ciphertext: string;
}

export interface RotatedSecret {
  secret: string;
  /** Until when deliveries also carry a signature made with the previous secret. */
  previousValidUntil: string;
}

/**
 * Each subscription's Standard Webhooks signing secret, kept encrypted in the
 * store; the plaintext exists only while signing and in the one answer that
 * shows it (create, rotate). Read per attempt, not cached: a rotation is in
 * force for every process at once, so no hand-out delay is needed.
 */
export class SubscriptionSecrets {
  constructor(
    private readonly repo: SubscriptionRepo,
    private readonly box: SecretBox,
    private readonly rotationOverlapMs: number,
  ) {}

  create(subscriptionId: string): NewSubscriptionSecret {
    const secret = generateWebhookSecret();
    return { secret, ciphertext: this.box.encrypt(secret, context(subscriptionId)) };
  }

  /** The secrets to sign with at `at`: the current one, then the previous one while its overlap lasts. */
  async signingSecrets(subscriptionId: string, at: Date): Promise<string[] | undefined> {
    const row = await this.repo.findSecrets(subscriptionId);
    if (!row) return undefined;
    const current = this.box.decrypt(row.secretCiphertext, context(subscriptionId));
    const previousLive =
      row.previousSecretCiphertext !== null &&
      row.previousExpiresAt !== null &&
      Date.parse(row.previousExpiresAt) > at.getTime();
    return previousLive && row.previousSecretCiphertext
      ? [current, this.box.decrypt(row.previousSecretCiphertext, context(subscriptionId))]
      : [current];
  }

  /** Re-encrypts every subscription's secrets under the ring's current key (master key rotation); rows changed. */
  reencryptAll(): Promise<number> {
    return resealAll(this.box, this.repo, context);
  }

  /** A new secret; the old one keeps signing (second signature) for the overlap. Undefined: no such subscription. */
  async rotate(subscriptionId: string): Promise<RotatedSecret | undefined> {
    for (;;) {
      const existing = await this.repo.findSecrets(subscriptionId);
      if (!existing) return undefined;
      const { secret, ciphertext } = this.create(subscriptionId);
      const previousValidUntil = new Date(Date.now() + this.rotationOverlapMs).toISOString();
      // Another rotation won the race: go again so the caller gets a secret that is really in force.
      if (await this.repo.rotateSecret(subscriptionId, existing.secretCiphertext, ciphertext, previousValidUntil))
        return { secret, previousValidUntil };
    }
  }
}
