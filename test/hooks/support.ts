import { createHmac, randomUUID } from 'node:crypto';
import type { paths } from '../../src/client/index.js';
import { answered, http, type TestResponse, type TestService } from '../support/harness.js';

/** A hook's creation body as the OpenAPI document types it (one shape per scheme). */
export type HookBody =
  paths['/api/v1/workflow/{workflowId}/hooks']['post']['requestBody']['content']['application/json'];

/** Creates a hook on the workflow (201): its id, URL and secret, the secret shown this once. */
export function createHook(svc: TestService, workflowId: string, body: HookBody) {
  return answered(
    svc.client.POST('/api/v1/workflow/{workflowId}/hooks', { params: { path: { workflowId } }, body }),
    201,
  );
}

/** The path parameters of the /api/v1/hooks/{hookId} routes. */
export const hookPath = (hookId: string) => ({ params: { path: { hookId } } });

/**
 * Signatures computed here from each scheme's published rules, not with the service's code, so a
 * verifier that drifted from the scheme fails these tests.
 */
export const sign = {
  standardWebhooks(secret: string, body: string, options: { id?: string; timestamp?: number } = {}) {
    const id = options.id ?? `msg_${randomUUID()}`;
    const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
    const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
    const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
    return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': `v1,${signature}` };
  },
  github(secret: string, body: string, delivery: string = randomUUID(), event = 'push') {
    return {
      'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
      'x-github-delivery': delivery,
      'x-github-event': event,
    };
  },
  stripe(secret: string, body: string, timestamp = Math.floor(Date.now() / 1000)) {
    const v1 = createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
    return { 'stripe-signature': `t=${timestamp},v1=${v1}` };
  },
  hmac(header: string, secret: string, body: string) {
    return { [header]: createHmac('sha256', secret).update(body).digest('hex') };
  },
};

/** POSTs a delivery as a sender would: no API key, the raw JSON text, its signature headers. */
export function deliver(
  svc: TestService,
  hookId: string,
  body: string,
  headers: Record<string, string>,
): Promise<TestResponse> {
  return http(`${svc.url}/hooks/${hookId}`, 'POST', {
    rawBody: body,
    key: null,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

/** The ids of the workflow's cases, newest first. */
export async function caseIdsOf(svc: TestService, workflowId: string): Promise<string[]> {
  const list = await answered(svc.client.GET('/api/v1/case', { params: { query: { workflowId, limit: 100 } } }), 200);
  return list.cases.map((c) => c.caseId);
}
