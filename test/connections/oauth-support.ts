import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { expect } from 'vitest';
import { answered, type TestService } from '../support/harness.js';
import { clientFor } from '../support/keys.js';
import type { FakeOAuthProvider } from './fake-oauth-provider.js';
import { connect, connection, type Integration } from './support.js';

const chromiumPath = '/usr/bin/chromium';

/**
 * Debian's chromium, headless (installed with apt when missing: CI runs as
 * root; nothing downloads a browser build of its own).
 */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(chromiumPath)) {
    execFileSync('bash', ['-c', 'apt-get update && apt-get install -y chromium'], { stdio: 'inherit' });
  }
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export type Decision = 'allow' | 'deny';

/** A person in a real browser: opens the authorization URL, clicks Allow or Deny, lands on the service's page. */
export async function consentInBrowser(
  browser: Browser,
  authorizationUrl: string,
  decision: Decision,
): Promise<{ outcome: string | null; text: string; url: string }> {
  const page = await browser.newPage();
  try {
    await page.goto(authorizationUrl);
    await Promise.all([page.waitForURL(/\/api\/v1\/oauth\/callback/), page.click(`#${decision}`)]);
    const body = page.locator('body');
    return { outcome: await body.getAttribute('data-outcome'), text: await body.innerText(), url: page.url() };
  } finally {
    await page.close();
  }
}

/**
 * The same consent without a browser: the form post, then the provider's
 * redirect followed by hand (`redirectTo` may move it, for a service that
 * restarted on another port).
 */
export async function consentByHttp(
  authorizationUrl: string,
  decision: Decision,
  redirectTo: (callbackUrl: string) => string = (url) => url,
): Promise<{ callbackUrl: string; status: number; outcome: string | undefined; html: string }> {
  const auth = new URL(authorizationUrl);
  const form = new URLSearchParams({ decision });
  for (const name of ['redirect_uri', 'state', 'code_challenge', 'scope', 'client_id'])
    form.set(name, auth.searchParams.get(name) ?? '');
  const decided = await fetch(new URL('/authorize/decide', auth.origin), {
    method: 'POST',
    body: form,
    redirect: 'manual',
  });
  expect(decided.status).toBe(302);
  const callbackUrl = redirectTo(decided.headers.get('location') ?? '');
  const page = await fetch(callbackUrl);
  const html = await page.text();
  return { callbackUrl, status: page.status, outcome: /data-outcome="([a-z]+)"/.exec(html)?.[1], html };
}

/** A connect of the OAuth `integration` with the provider's client pair: the pending_authorization answer. */
export function connectOAuth(svc: TestService, integration: Integration, provider: FakeOAuthProvider) {
  const credentialData = { client_id: provider.clientId, client_secret: provider.clientSecret };
  return answered(connect(svc, connection(integration, svc.workspaceId, { credentialData })), 201);
}

/** What the check of an OAuth connect answers `key` (the service's own by default). */
export function checkToken(svc: TestService, connectionToken: string, key = svc.key) {
  const call = clientFor(svc, key).GET('/api/v1/integration/connect/{connectionToken}', {
    params: { path: { connectionToken } },
  });
  return answered(call, 200);
}

/** The check answer for anything that is not (yet) a connection: every field present and null. */
export const noConnection = {
  activeIntegrationId: null,
  activeIntegrationVersionId: null,
  activeCredentialId: null,
  workspaceId: null,
  testPassed: null,
  testError: null,
};

/** Polls until `read` satisfies `done` (bounded); the last value. */
export async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const until = Date.now() + 30_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > until) throw new Error(`still waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
