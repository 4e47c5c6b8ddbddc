import type { Db } from './database.js';

/** The tables whose rows hold a sealed secret and, during a rotation's overlap, the sealed previous one. */
type SealedPairTable = 'hooks' | 'event_subscriptions';

/** A row's sealed pair as it was read. */
interface SealedPair {
  id: string;
  secretCiphertext: string;
  previousSecretCiphertext: string | null;
}

/**
 * Swaps in resealed ciphertexts if the row still holds `read`'s (false when a rotation came between):
 * a compare-and-set on both columns, so a reseal never overwrites a secret rotated since it was read.
 */
export async function replaceSealedPair(
  db: Db,
  table: SealedPairTable,
  read: SealedPair,
  current: string,
  previous: string | null,
): Promise<boolean> {
  let update = db
    .updateTable(table)
    .set({ secret_ciphertext: current, previous_secret_ciphertext: previous })
    .where('id', '=', read.id)
    .where('secret_ciphertext', '=', read.secretCiphertext);
  update =
    read.previousSecretCiphertext === null
      ? update.where('previous_secret_ciphertext', 'is', null)
      : update.where('previous_secret_ciphertext', '=', read.previousSecretCiphertext);
  const result = await update.executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
