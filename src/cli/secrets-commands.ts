import type { Command } from 'commander';
import { WebhookSecrets } from '../callbacks/webhook-secrets.js';
import { loadConfig, type Config } from '../config/config.js';
import { CredentialVault } from '../connections/credential-vault.js';
import { addKeyToFile, dropOldKeysFromFile, keyFileOf, loadMasterKeys, SecretBox } from '../crypto/secret-box.js';
import { HookSecrets } from '../hooks/hook-secrets.js';
import { CallbackRepo } from '../store/callback-repo.js';
import { HookRepo } from '../store/hook-repo.js';
import { ConnectionRepo } from '../store/connection-repo.js';
import { migrateToLatest, openStore } from '../store/database.js';
import { OAuthRepo } from '../store/oauth-repo.js';
import { SubscriptionRepo } from '../store/subscription-repo.js';
import { SubscriptionSecrets } from '../subscriptions/subscription-secrets.js';

type Output = (value: unknown) => void;
type Fail = (message: string) => never;

/**
 * Every secret of the store under the box's current key: connection
 * credentials (with their OAuth tokens), OAuth attempts' PKCE verifiers and
 * webhook signing secrets, inbound hooks' and event subscriptions' secrets. (A new encrypted column belongs here too.)
 */
async function reencryptEverything(
  config: Config,
  box: SecretBox,
): Promise<{
  currentKeyId: string;
  credentials: number;
  oauthAttempts: number;
  webhookSecrets: number;
  hookSecrets: number;
  subscriptionSecrets: number;
}> {
  const store = openStore(config.dataDir, config.databaseUrl);
  try {
    await migrateToLatest(store.db);
    const vault = new CredentialVault(box);
    const credentials = await vault.reencryptAll(new ConnectionRepo(store.db));
    const oauthAttempts = await vault.reencryptAttempts(new OAuthRepo(store.db));
    const webhookSecrets = await new WebhookSecrets(
      new CallbackRepo(store.db),
      box,
      config.callbacks.secretRotationOverlapMs,
    ).reencryptAll();
    const hookSecrets = await new HookSecrets(box).reencryptAll(new HookRepo(store.db));
    const subscriptionSecrets = await new SubscriptionSecrets(
      new SubscriptionRepo(store.db),
      box,
      config.callbacks.secretRotationOverlapMs,
    ).reencryptAll();
    return {
      currentKeyId: box.currentKeyId,
      credentials,
      oauthAttempts,
      webhookSecrets,
      hookSecrets,
      subscriptionSecrets,
    };
  } finally {
    await store.close();
  }
}

/**
 * Master key operations. Services read the key ring at start: run these with
 * the services stopped, or restart them right after (docs/connections.md).
 */
export function registerSecretsCommands(program: Command, print: Output, fail: Fail): void {
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
    .action(async (opts: { dropOld: boolean }) => {
      const config = loadConfig();
      if (config.secrets.masterKey) {
        fail(
          'CASEFLOW_MASTER_KEY is set: put a new id:key pair first in it (keep the old ones after it), restart, then run `caseflow secrets reencrypt`',
        );
      }
      const keyFile = keyFileOf(config);
      // Creates the file with a first key when there is none yet, like the service would.
      loadMasterKeys({ keyFile });
      const counts = await reencryptEverything(config, new SecretBox(addKeyToFile(keyFile)));
      print({ ...counts, droppedKeyIds: opts.dropOld ? dropOldKeysFromFile(keyFile) : [] });
    });

  secrets
    .command('reencrypt')
    .description('re-encrypt every secret under the current (first) master key of the configured ring')
    .action(async () => {
      const config = loadConfig();
      print(
        await reencryptEverything(
          config,
          new SecretBox(loadMasterKeys({ masterKey: config.secrets.masterKey, keyFile: keyFileOf(config) })),
        ),
      );
    });
}
