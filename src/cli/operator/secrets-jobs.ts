import { WebhookSecrets } from '../../callbacks/webhook-secrets.js';
import { loadConfig, type Config } from '../../config/config.js';
import { CredentialVault } from '../../connections/credential-vault.js';
import { addKeyToFile, dropOldKeysFromFile, keyFileOf, loadMasterKeys, SecretBox } from '../../crypto/secret-box.js';
import { HookSecrets } from '../../hooks/hook-secrets.js';
import { CallbackRepo } from '../../store/callback-repo.js';
import { HookRepo } from '../../store/hook-repo.js';
import { ConnectionRepo } from '../../store/connection-repo.js';
import { migrateToLatest, openStore } from '../../store/database.js';
import { OAuthRepo } from '../../store/oauth-repo.js';
import { SubscriptionRepo } from '../../store/subscription-repo.js';
import { SubscriptionSecrets } from '../../subscriptions/subscription-secrets.js';
import { fail, print, sayWhileWaiting } from './output.js';

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
    await migrateToLatest(store.db, sayWhileWaiting);
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

/** What the master key commands do; loaded only when one of them runs. */
export const secretsJobs = {
  async rotateMasterKey(dropOld: boolean): Promise<void> {
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
    print({ ...counts, droppedKeyIds: dropOld ? dropOldKeysFromFile(keyFile) : [] });
  },
  async reencrypt(): Promise<void> {
    const config = loadConfig();
    print(
      await reencryptEverything(
        config,
        new SecretBox(loadMasterKeys({ masterKey: config.secrets.masterKey, keyFile: keyFileOf(config) })),
      ),
    );
  },
};
