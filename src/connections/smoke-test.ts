import { Outbound, OutboundRefusedError } from '../net/outbound.js';
import type { ActionVersion } from '../domain/catalog.js';
import { applyCredential } from './credential-auth.js';
import type { CredentialData } from './credential-data.js';
import { redactText, secretStrings } from './redact.js';
import type { SmokeTestOutcome } from '../domain/connections.js';
import type { StoredCredential } from '../domain/connections.js';

/** What testError quotes of a failed answer's body. */
const QUOTED_CHARACTERS = 200;
/** Enough of the body to redact secrets around the quoted part. */
const READ_BYTES = 16 * 1024;

export interface SmokeTestRequest {
  action: Pick<ActionVersion, 'endpoint'>;
  credential: Pick<StoredCredential, 'authType'>;
  data: CredentialData;
  /** Sent as a JSON body with POST; without it the test is a GET. */
  testInputData?: Record<string, unknown>;
  timeoutMs: number;
}

/**
 * Calls the action's endpoint with the credential applied as its authType
 * says, through the outbound policy. 2xx and 3xx pass (redirects are not
 * followed); otherwise testError has the status and the first 200 characters
 * of the body, or the network error. Credential values are redacted from
 * testError (an endpoint that echoes the key must not make it readable).
 */
export async function smokeTest(outbound: Outbound, request: SmokeTestRequest): Promise<SmokeTestOutcome> {
  const secrets = secretStrings(request.data);
  const fail = (message: string): SmokeTestOutcome => ({ testPassed: false, testError: redactText(message, secrets) });
  const applied = applyCredential(request.credential.authType, request.data);
  if ('error' in applied) return fail(applied.error);
  const withBody = request.testInputData !== undefined;
  try {
    const response = await outbound.request(request.action.endpoint, {
      method: withBody ? 'POST' : 'GET',
      headers: {
        ...applied.headers,
        ...(withBody ? { 'content-type': 'application/json' } : {}),
        'user-agent': 'caseflow-smoke-test',
      },
      body: withBody ? JSON.stringify(request.testInputData) : undefined,
      timeoutMs: request.timeoutMs,
      maxResponseBytes: READ_BYTES,
    });
    if (response.status >= 200 && response.status < 400) return { testPassed: true, testError: null };
    // Characters, not UTF-16 units: a quoted emoji is never cut in half.
    const quoted = Array.from(redactText(response.body, secrets)).slice(0, QUOTED_CHARACTERS).join('');
    return { testPassed: false, testError: `HTTP ${response.status}: ${quoted}` };
  } catch (err) {
    if (err instanceof OutboundRefusedError) return fail(`Refused by the outbound policy: ${err.message}`);
    return fail(`Network error: ${err instanceof Error ? err.message : String(err)}`);
  }
}
