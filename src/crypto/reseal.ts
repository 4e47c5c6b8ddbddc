import type { SecretBox } from './secret-box.js';

/** A row holding a current secret and, during a rotation's overlap, the previous one; both sealed. */
export interface SealedSecretPair {
  id: string;
  secretCiphertext: string;
  previousSecretCiphertext: string | null;
}

/** Where such rows live: paged by id, read one by one, swapped only if unchanged since read. */
export interface SealedSecretPairs<Row extends SealedSecretPair> {
  secretPage(after: string, limit: number): Promise<Row[]>;
  secretRow(id: string): Promise<Row | undefined>;
  /** Swaps in resealed ciphertexts if the row still holds `row`'s (false when a rotation came between). */
  replaceCiphertexts(row: Row, current: string, previous: string | null): Promise<boolean>;
}

/**
 * Re-encrypts every row's secrets under the ring's current key (master key rotation), each bound to its
 * row by `context(id)`; the rows changed. A row rotated while this runs is read again and resealed.
 */
export async function resealAll<Row extends SealedSecretPair>(
  box: SecretBox,
  rows: SealedSecretPairs<Row>,
  context: (id: string) => string,
): Promise<number> {
  const stale = (ciphertext: string | null) => ciphertext !== null && box.needsReencryption(ciphertext);
  const reseal = async (row: Row): Promise<boolean> => {
    if (!stale(row.secretCiphertext) && !stale(row.previousSecretCiphertext)) return false;
    const again = (ciphertext: string) => box.encrypt(box.decrypt(ciphertext, context(row.id)), context(row.id));
    const previous = row.previousSecretCiphertext === null ? null : again(row.previousSecretCiphertext);
    if (await rows.replaceCiphertexts(row, again(row.secretCiphertext), previous)) return true;
    // Rotated in between: the fresh row is resealed instead (a deleted row has nothing left to reseal).
    const fresh = await rows.secretRow(row.id);
    return fresh ? reseal(fresh) : false;
  };
  let changed = 0;
  for (let after = ''; ;) {
    const page = await rows.secretPage(after, 100);
    for (const row of page) if (await reseal(row)) changed += 1;
    const last = page.at(-1);
    if (last === undefined) return changed;
    after = last.id;
  }
}
