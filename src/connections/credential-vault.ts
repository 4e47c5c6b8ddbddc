import type { SecretBox } from '../crypto/secret-box.js';
import type { ConnectionRepo } from '../store/connection-repo.js';
import { forEachRow } from '../store/paging.js';
import type { CredentialData } from './credential-data.js';
import type { StoredCredential } from './types.js';

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

  /** Re-encrypts every stored credential under the ring's current key (master key rotation); rows changed. */
  async reencryptAll(repo: ConnectionRepo): Promise<number> {
    let changed = 0;
    await forEachRow(
      (after) => repo.credentialPage(after, 100),
      (credential) => credential.id,
      async (credential) => {
        if (!this.box.needsReencryption(credential.dataCiphertext)) return;
        const next = this.box.encrypt(
          this.box.decrypt(credential.dataCiphertext, context(credential)),
          context(credential),
        );
        // Only re-encryption rewrites a credential, so a lost compare-and-set means another run did it.
        if (await repo.replaceCiphertext(credential.id, credential.dataCiphertext, next)) changed += 1;
      },
    );
    return changed;
  }
}
