import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CredentialInput } from '../catalog/support.js';

type TemplateInput = CredentialInput['inputs'][string];

/** How the token endpoint answers refresh requests. */
export type RefreshMode = 'ok' | 'invalid_grant' | 'error500';

interface IssuedCode {
  clientId: string;
  redirectUri: string;
  challenge: string;
  scope: string;
  used: boolean;
}

/** One request the token endpoint received (grant type and the client authentication it used). */
export interface TokenRequest {
  grantType: string;
  auth: 'basic' | 'post' | 'none';
  params: Record<string, string>;
}

const escape = (text: string) => text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * An OAuth 2 provider over real HTTP on loopback: an authorization page with a
 * consent form (Allow / Deny), and a token endpoint that checks the client, the
 * code, the redirect URI and the PKCE verifier, issues access tokens with
 * `expiresIn` and rotates refresh tokens (an old one is invalid_grant). It can
 * answer refreshes with invalid_grant or 500, hold them until released (a slow
 * provider), and counts what it was asked.
 */
export class FakeOAuthProvider {
  readonly clientId = 'client-abc';
  readonly clientSecret = 'client-secret-0123456789';
  url = '';
  expiresIn = 3600;
  refreshMode: RefreshMode = 'ok';
  /** Whether refresh answers carry a new refresh token (rotation). */
  rotate = true;
  readonly tokenRequests: TokenRequest[] = [];
  /** Access tokens currently valid (the protected API accepts these). */
  readonly validAccessTokens = new Set<string>();
  currentRefreshToken: string | undefined;
  private readonly codes = new Map<string, IssuedCode>();
  private gate: Promise<void> | undefined;
  private openGate: (() => void) | undefined;
  private server: Server | undefined;
  private serial = 0;

  get refreshCount(): number {
    return this.tokenRequests.filter((r) => r.grantType === 'refresh_token').length;
  }

  /** Refresh answers wait until release(). */
  holdRefreshes(): void {
    this.gate = new Promise((resolve) => (this.openGate = resolve));
  }

  release(): void {
    this.openGate?.();
    this.gate = undefined;
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => void this.handle(req, res, Buffer.concat(chunks).toString('utf8')));
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.release();
    await new Promise<void>((resolve) => {
      this.server?.closeAllConnections();
      this.server?.close(() => resolve());
    });
  }

  /** The credential template inputs of an integration using this provider (endpoints as defaults). */
  templateInputs(): Record<
    'client_id' | 'client_secret' | 'authorization_url' | 'token_url' | 'scopes',
    TemplateInput
  > {
    const input = (name: string, extra: Partial<TemplateInput> = {}): TemplateInput => ({
      displayName: name,
      variableName: name,
      type: 'str',
      ...extra,
    });
    return {
      client_id: input('client_id', { isNullable: false }),
      client_secret: input('client_secret', { isNullable: false }),
      authorization_url: input('authorization_url', { default: `${this.url}/authorize`, isEditable: false }),
      token_url: input('token_url', { default: `${this.url}/token`, isEditable: false }),
      scopes: input('scopes', { default: 'read write' }),
    };
  }

  private async handle(req: IncomingMessage, res: ServerResponse, body: string): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    if (req.method === 'GET' && url.pathname === '/authorize') {
      this.consentPage(url, res);
      return;
    }
    if (req.method === 'POST' && url.pathname === '/authorize/decide') {
      this.decide(body, res);
      return;
    }
    if (req.method === 'POST' && url.pathname === '/token') return this.token(req, body, res);
    if (url.pathname === '/api/me') {
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      if (token && this.validAccessTokens.has(token))
        return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"name":"Ada"}');
      return void res.writeHead(401).end('{"error":"invalid_token"}');
    }
    res.writeHead(404).end();
  }

  private consentPage(url: URL, res: ServerResponse): void {
    const q = Object.fromEntries(url.searchParams);
    if (q.client_id !== this.clientId || q.response_type !== 'code' || q.code_challenge_method !== 'S256') {
      res.writeHead(400).end('bad authorization request');
      return;
    }
    const hidden = ['redirect_uri', 'state', 'code_challenge', 'scope', 'client_id']
      .map((n) => `<input type="hidden" name="${n}" value="${escape(q[n] ?? '')}">`)
      .join('');
    res.writeHead(200, { 'content-type': 'text/html' }).end(
      `<!doctype html><title>Consent</title><h1>Allow caseflow to access your account?</h1>
<form method="post" action="/authorize/decide">${hidden}
<button name="decision" value="allow" id="allow">Allow</button>
<button name="decision" value="deny" id="deny">Deny</button></form>`,
    );
  }

  private decide(body: string, res: ServerResponse): void {
    const form = Object.fromEntries(new URLSearchParams(body));
    const redirect = new URL(form.redirect_uri ?? '');
    redirect.searchParams.set('state', form.state ?? '');
    if (form.decision === 'allow') {
      const code = randomBytes(16).toString('hex');
      this.codes.set(code, {
        clientId: form.client_id ?? '',
        redirectUri: form.redirect_uri ?? '',
        challenge: form.code_challenge ?? '',
        scope: form.scope ?? '',
        used: false,
      });
      redirect.searchParams.set('code', code);
    } else redirect.searchParams.set('error', 'access_denied');
    res.writeHead(302, { location: redirect.toString() }).end();
  }

  private async token(req: IncomingMessage, body: string, res: ServerResponse): Promise<void> {
    const params = Object.fromEntries(new URLSearchParams(body));
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const auth: TokenRequest['auth'] = basic ? 'basic' : params.client_secret ? 'post' : 'none';
    this.tokenRequests.push({ grantType: params.grant_type ?? '', auth, params });
    const [id, secret] = basic
      ? Buffer.from(basic, 'base64').toString('utf8').split(':').map(decodeURIComponent)
      : [params.client_id, params.client_secret];
    const answer = (status: number, json: unknown) =>
      void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(json));
    if (id !== this.clientId || secret !== this.clientSecret) {
      answer(401, { error: 'invalid_client' });
      return;
    }

    if (params.grant_type === 'authorization_code') {
      const issued = this.codes.get(params.code ?? '');
      const challenge = createHash('sha256')
        .update(params.code_verifier ?? '')
        .digest('base64url');
      if (!issued || issued.used || issued.redirectUri !== params.redirect_uri || issued.challenge !== challenge) {
        answer(400, { error: 'invalid_grant', error_description: 'bad code, redirect_uri or code_verifier' });
        return;
      }
      issued.used = true;
      answer(200, this.issue(issued.scope, true));
      return;
    }
    if (params.grant_type === 'refresh_token') {
      if (this.gate) await this.gate;
      if (this.refreshMode === 'error500') {
        answer(500, { error: 'server_error' });
        return;
      }
      if (this.refreshMode === 'invalid_grant' || params.refresh_token !== this.currentRefreshToken) {
        answer(400, { error: 'invalid_grant', error_description: 'refresh token revoked' });
        return;
      }
      answer(200, this.issue('read write', this.rotate));
      return;
    }
    answer(400, { error: 'unsupported_grant_type' });
  }

  private issue(scope: string, withRefresh: boolean): Record<string, unknown> {
    this.serial += 1;
    const access = `at-${this.serial}-${randomBytes(8).toString('hex')}`;
    this.validAccessTokens.clear();
    this.validAccessTokens.add(access);
    const answer: Record<string, unknown> = {
      access_token: access,
      token_type: 'Bearer',
      expires_in: this.expiresIn,
      scope,
    };
    if (withRefresh) {
      this.currentRefreshToken = `rt-${this.serial}-${randomBytes(8).toString('hex')}`;
      answer.refresh_token = this.currentRefreshToken;
    }
    return answer;
  }
}
