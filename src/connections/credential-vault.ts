import type { SecretBox } from '../crypto/secret-box.js';
import type { ConnectionRepo } from '../store/connection-repo.js';
import type { OAuthRepo } from '../store/oauth-repo.js';
import { forEachRow } from '../store/paging.js';
import type { CredentialData } from './credential-data.js';
import type { StoredCredential } from '../domain/connections.js';

type Owner = Pick<StoredCredential, 'id' | 'organizationId' | 'workspaceId'>;

/** Associated data: a ciphertext copied into another row, workspace or organization fails to decrypt. */
const context = (owner: Owner) => `connection-credential:${owner.id}:${owner.organizationId}:${owner.workspaceId}`;

/**
 * Seals and opens connection credentials (credentialData as JSON) with the
 * master key ring (AES-256-GCM, key id in the value). Plaintext exists only
 * in memory: in the connect request and inside the activity that uses it.
 */
export class CredentialVault {
  constructor(private readonly box: SecretBox) {}

  seal(owner: Owner, data: CredentialData): string {
    return this.box.encrypt(JSON.stringify(data), context(owner));
  }

  open(credential: StoredCredential): CredentialData {
    return JSON.parse(this.box.decrypt(credential.dataCiphertext, context(credential))) as CredentialData;
  }

  /** A small secret of one OAuth attempt (its PKCE verifier), bound to the attempt. */
  sealForAttempt(attemptId: string, value: string): string {
    return this.box.encrypt(value, `oauth-attempt:${attemptId}`);
  }

  openForAttempt(attemptId: string, ciphertext: string): string {
    return this.box.decrypt(ciphertext, `oauth-attempt:${attemptId}`);
  }

  /** Re-encrypts every stored credential under the ring's current key (master key rotation); rows changed. */
  async reencryptAll(repo: ConnectionRepo): Promise<number> {
    let changed = 0;
    await forEachRow(
      (after) => repo.credentialPage(after, 100),
      (credential) => credential.id,
      async (first) => {
        // A lost compare-and-set means the row changed meanwhile (new OAuth tokens, another run): read it again.
        for (
          let credential: StoredCredential | undefined = first;
          credential;
          credential = await repo.findCredential(first.id)
        ) {
          if (!this.box.needsReencryption(credential.dataCiphertext)) return;
          const next = this.box.encrypt(
            this.box.decrypt(credential.dataCiphertext, context(credential)),
            context(credential),
          );
          if (await repo.replaceCiphertext(credential.id, credential.dataCiphertext, next)) {
            changed += 1;
            return;
          }
        }
      },
    );
    return changed;
  }

  /**
   * Re-encrypts every OAuth attempt's PKCE verifier under the ring's current
   * key, so a person who consents after a rotation still completes the
   * attempt; rows changed. A verifier is written once, so a lost
   * compare-and-set only means another rotation did it first.
   */
  async reencryptAttempts(repo: OAuthRepo): Promise<number> {
    let changed = 0;
    await forEachRow(
      (after) => repo.verifierPage(after, 100),
      (attempt) => attempt.id,
      async ({ id, verifierCiphertext }) => {
        if (!this.box.needsReencryption(verifierCiphertext)) return;
        const next = this.sealForAttempt(id, this.openForAttempt(id, verifierCiphertext));
        if (await repo.replaceVerifier(id, verifierCiphertext, next)) changed += 1;
      },
    );
    return changed;
  }
}
