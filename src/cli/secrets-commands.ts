import type { Command } from 'commander';

/** The store and the key ring are loaded only when one of these runs: see operator/secrets-jobs.ts. */
const jobs = async () => (await import('./operator/secrets-jobs.js')).secretsJobs;

/**
 * Master key operations. Services read the key ring at start: run these with
 * the services stopped, or restart them right after (docs/connections.md).
 */
export function registerSecretsCommands(program: Command): void {
  const secrets = program.command('secrets').description('the master key ring and what it encrypts');

  secrets
    .command('rotate-master-key')
    .description(
      'put a fresh master key first in the key file and re-encrypt every secret with it; the old keys stay for the ' +
        'Temporal histories written under them, unless --drop-old',
    )
    .option(
      '--drop-old',
      'drop the old keys from the file after re-encrypting (only once no run started under them can still run or be replayed)',
      false,
    )
    .action(async (opts: { dropOld: boolean }) => (await jobs()).rotateMasterKey(opts.dropOld));

  secrets
    .command('reencrypt')
    .description('re-encrypt every secret under the current (first) master key of the configured ring')
    .action(async () => (await jobs()).reencrypt());
}
