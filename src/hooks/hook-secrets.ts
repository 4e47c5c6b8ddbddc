import type { SecretBox } from '../crypto/secret-box.js';
import type { HookRecord } from '../domain/hooks.js';
import type { HookRepo } from '../store/hook-repo.js';
import { resealAll } from '../crypto/reseal.js';

/** The ciphertext is bound to its hook: a value copied into another row does not decrypt. */
const context = (hookId: string) => `hook-secret:${hookId}`;

/** Hook signing secrets under the master key ring: sealed for the store, opened only to verify a delivery. */
export class HookSecrets {
  constructor(private readonly box: SecretBox) {}

  seal(hookId: string, secret: string): string {
    return this.box.encrypt(secret, context(hookId));
  }

  /** The secrets that verify now: the current one, then the previous one while its grace period lasts. */
  inForce(hook: HookRecord, now: number): string[] {
    const secrets = [this.box.decrypt(hook.secretCiphertext, context(hook.id))];
    const previousUntil = hook.previousSecretExpiresAt === null ? 0 : Date.parse(hook.previousSecretExpiresAt);
    if (hook.previousSecretCiphertext && previousUntil > now)
      secrets.push(this.box.decrypt(hook.previousSecretCiphertext, context(hook.id)));
    return secrets;
  }

  /** Re-encrypts every hook's secrets under the ring's current key (master key rotation); rows changed. */
  reencryptAll(repo: HookRepo): Promise<number> {
    return resealAll(this.box, repo, context);
  }
}
