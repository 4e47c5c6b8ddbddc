import type { SecretBox } from '../crypto/secret-box.js';
import type { HookRecord } from '../domain/hooks.js';
import type { HookRepo, HookSecretRow } from '../store/hook-repo.js';
import { forEachRow } from '../store/paging.js';

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
  async reencryptAll(repo: HookRepo): Promise<number> {
    let changed = 0;
    await forEachRow(
      (after) => repo.secretPage(after, 100),
      (row) => row.id,
      async (row) => {
        if (await this.reseal(repo, row)) changed += 1;
      },
    );
    return changed;
  }

  private async reseal(repo: HookRepo, row: HookSecretRow): Promise<boolean> {
    const stale = (ciphertext: string | null) => ciphertext !== null && this.box.needsReencryption(ciphertext);
    if (!stale(row.secretCiphertext) && !stale(row.previousSecretCiphertext)) return false;
    const reseal = (ciphertext: string) => this.seal(row.id, this.box.decrypt(ciphertext, context(row.id)));
    const previous = row.previousSecretCiphertext === null ? null : reseal(row.previousSecretCiphertext);
    if (await repo.replaceCiphertexts(row, reseal(row.secretCiphertext), previous)) return true;
    // Rotated in between: the fresh row is resealed instead (a deleted hook has nothing left to reseal).
    const fresh = await repo.secretRow(row.id);
    return fresh ? this.reseal(repo, fresh) : false;
  }
}
