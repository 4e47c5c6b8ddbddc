import { answered, type TestService } from '../support/harness.js';
import { clientFor } from '../support/keys.js';

/** The case's callback deliveries (200), read with `key` or the service's own. */
export async function callbacksOf(svc: TestService, caseId: string, key?: string) {
  const client = key ? clientFor(svc, key) : svc.client;
  return answered(client.GET('/api/v1/case/{caseId}/callbacks', { params: { path: { caseId } } }), 200);
}

/** The workspace's current webhook secret (the service's own workspace by default). */
export async function webhookSecret(svc: TestService, workspaceId = svc.workspaceId): Promise<string> {
  const { secret } = await answered(
    svc.client.GET('/api/v1/workspace/{workspaceId}/webhook-secret', { params: { path: { workspaceId } } }),
    200,
  );
  return secret;
}
