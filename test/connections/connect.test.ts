import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CatalogService } from '../../src/catalog/catalog-service.js';
import { CatalogRepo } from '../../src/store/catalog-repo.js';
import { newAuthor, pngIcon } from '../catalog/support.js';
import { newCaller, newKey, newWorkspace } from '../support/keys.js';
import { startTestService, type TestService } from '../support/harness.js';
import {
  authorIntegration,
  connect,
  connection,
  expectError,
  failedFields,
  localServer,
  type Integration,
  type LocalServer,
} from './support.js';

const secret = 'sk-live-0123456789abcdef';
let svc: TestService;
let integration: Integration;
let endpoint: LocalServer;

beforeAll(async () => {
  svc = await startTestService();
  endpoint = await localServer((_req, res) => res.writeHead(200).end('ok'));
  integration = await authorIntegration(svc, svc.key, { endpoint: `${endpoint.url}/ping` });
});
afterAll(async () => {
  await endpoint?.close();
  await svc?.stop();
});

const countConnections = async () =>
  (await svc.service.context.store.db.selectFrom('connections').select('id').execute()).length;
const countCredentials = async () =>
  (await svc.service.context.store.db.selectFrom('connection_credentials').select('id').execute()).length;

describe('POST /api/v1/integration/connect', () => {
  it('connects: 201 with the contract fields, no secret anywhere in the answer, readable and listed', async () => {
    const res = await connect(svc, connection(integration, svc.workspaceId));
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({
      status: 'connected',
      activeIntegrationVersionId: integration.versionId,
      workspaceId: svc.workspaceId,
      testPassed: null,
      testError: null,
      authorizationUrl: null,
      connectionToken: null,
    });
    expect(res.body.activeIntegrationId).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body.activeCredentialId).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.text).not.toContain(secret);

    const read = await svc.request('GET', `/api/v1/connection/${String(res.body.activeIntegrationId)}`);
    expect(read.status, read.text).toBe(200);
    expect(read.body).toMatchObject({
      id: res.body.activeIntegrationId,
      status: 'connected',
      name: 'My connection',
      activeCredentialId: res.body.activeCredentialId,
    });
    expect(read.text).not.toContain(secret);
    const list = await svc.request('GET', `/api/v1/workspace/${svc.workspaceId}/connections`);
    expect(list.status, list.text).toBe(200);
    expect((list.body.connections as Array<{ id: string }>).map((c) => c.id)).toContain(res.body.activeIntegrationId);
    expect(list.text).not.toContain(secret);
  });

  it('is not idempotent: the same body twice makes two connections with two credentials', async () => {
    const body = connection(integration, svc.workspaceId);
    const first = await connect(svc, body);
    const second = await connect(svc, body);
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(first.body.activeIntegrationId).not.toBe(second.body.activeIntegrationId);
    expect(first.body.activeCredentialId).not.toBe(second.body.activeCredentialId);
  });

  it('encrypts credentialData at rest: the raw row and the SQLite files hold no plaintext', async () => {
    const marker = `marker-${crypto.randomUUID()}`;
    const res = await connect(svc, connection(integration, svc.workspaceId, { credentialData: { api_key: marker } }));
    expect(res.status, res.text).toBe(201);
    const row = await svc.service.context.store.db
      .selectFrom('connection_credentials')
      .selectAll()
      .where('id', '=', String(res.body.activeCredentialId))
      .executeTakeFirstOrThrow();
    expect(row.data_ciphertext).toMatch(/^v1:[A-Za-z0-9_-]+:[A-Za-z0-9_-]+$/);
    expect(JSON.stringify(row)).not.toContain(marker);
    for (const file of readdirSync(svc.dataDir).filter((f) => f.startsWith('caseflow.db'))) {
      expect(readFileSync(path.join(svc.dataDir, file)).includes(marker), file).toBe(false);
    }
  });

  it('reuses a credential with activeCredentialId (same workspace only)', async () => {
    const first = await connect(svc, connection(integration, svc.workspaceId));
    const reused = await connect(
      svc,
      connection(integration, svc.workspaceId, {
        credentialVersionId: undefined,
        credentialData: undefined,
        activeCredentialId: first.body.activeCredentialId,
      }),
    );
    expect(reused.status, reused.text).toBe(201);
    expect(reused.body.activeCredentialId).toBe(first.body.activeCredentialId);
    expect(reused.body.activeIntegrationId).not.toBe(first.body.activeIntegrationId);

    const other = await newWorkspace(svc);
    const elsewhere = await connect(
      svc,
      connection(integration, other, {
        credentialVersionId: undefined,
        credentialData: undefined,
        activeCredentialId: first.body.activeCredentialId,
      }),
    );
    expectError(elsewhere, 404, 'does not exist');
  });

  it('OAuth: pending_authorization without an activeIntegrationId; 422 without client_id / client_secret', async () => {
    const url = (name: string, value: string) => ({
      displayName: name,
      variableName: name,
      type: 'str' as const,
      default: value,
    });
    const oauth = await authorIntegration(svc, svc.key, {
      authType: 'oauth',
      inputs: {
        client_id: { displayName: 'Client id', variableName: 'client_id', type: 'str' },
        client_secret: { displayName: 'Client secret', variableName: 'client_secret', type: 'str' },
        authorization_url: url('authorization_url', 'https://provider.example/authorize'),
        token_url: url('token_url', 'https://provider.example/token'),
      },
    });
    const pending = await connect(
      svc,
      connection(oauth, svc.workspaceId, {
        credentialData: { client_id: 'id-1234', client_secret: 'secret-5678' },
        testActionVersionId: oauth.actionVersionId,
      }),
    );
    expect(pending.status, pending.text).toBe(201);
    expect(pending.body).toMatchObject({
      status: 'pending_authorization',
      activeIntegrationId: null,
      testPassed: null,
    });
    // The flow itself is tested in oauth.test.ts.
    expect(String(pending.body.authorizationUrl)).toMatch(/^https:\/\/provider\.example\/authorize\?/);
    expect(pending.body.connectionToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const missing = await connect(
      svc,
      connection(oauth, svc.workspaceId, { credentialData: { client_id: 'id-1234' } }),
    );
    expectError(missing, 422, 'client_secret');
  });
});

describe('published integrations', () => {
  it('any organization connects what the service published, into its own workspace only', async () => {
    const catalog = new CatalogService(new CatalogRepo(svc.service.context.store.db), () => Promise.resolve());
    const provider = await catalog.publishProvider('Caseflow');
    const published = await catalog.publishIntegration({
      providerId: provider.id,
      content: {
        name: 'Published',
        description: null,
        icon: pngIcon,
        category: ['a'],
        requiredPlan: 'core',
        status: 'active',
        isNew: false,
        isPopular: false,
        isBeta: false,
      },
      actions: [
        { name: 'Ping', endpoint: `${endpoint.url}/ping`, description: null, inputs: {}, outputs: {}, code: null },
      ],
      credential: {
        name: 'Key',
        description: null,
        icon: pngIcon,
        authType: 'api_key',
        status: 'active',
        inputs: {
          api_key: {
            displayName: 'Key',
            variableName: 'api_key',
            type: 'str',
            order: 1,
            isSecret: true,
            isNullable: true,
            isEditable: true,
            isVisible: true,
          },
        },
      },
    });
    const ids: Integration = {
      id: published.integration.id,
      versionId: published.integration.versionId,
      actionVersionId: published.createdActions[0]?.actionVersionId ?? '',
      credentialVersionId: published.createdCredential?.credentialVersionId ?? '',
    };
    const tenant = await newCaller(svc, ['integration:full'], { verified: false });
    const workspace = await newWorkspace(svc, tenant.organizationId);
    const made = await connect(
      svc,
      connection(ids, workspace, { testActionVersionId: ids.actionVersionId }),
      tenant.key,
    );
    expect(made.status, made.text).toBe(201);
    expect(made.body).toMatchObject({ status: 'connected', testPassed: true });
    expectError(await connect(svc, connection(ids, svc.workspaceId), tenant.key), 403);
  });
});

describe('permission first (403), then the body (400)', () => {
  it('401 without a key', async () => {
    expectError(
      await svc.request('POST', '/api/v1/integration/connect', {
        body: { connection: connection(integration, svc.workspaceId) },
        key: null,
      }),
      401,
    );
  });

  it('reads the body only after the key: a malformed body is 401 without a key, 400 with one, and creates nothing', async () => {
    const before = await countConnections();
    const send = (key: string | null) =>
      svc.request('POST', '/api/v1/integration/connect', {
        rawBody: '{"connection": {"workspaceId": ',
        headers: { 'content-type': 'application/json' },
        key,
      });
    expectError(await send(null), 401);
    const res = await send(svc.key);
    expectError(res, 400);
    expect(res.body.errorCode).toBe('MALFORMED_JSON');
    expect(await countConnections()).toBe(before);
  });

  it('403 for a workspaceId that is not a UUID, even with an otherwise broken body', async () => {
    expectError(await connect(svc, { workspaceId: 'not-a-uuid', integrationVersionId: 'also-bad' }), 403);
    expectError(await svc.request('POST', '/api/v1/integration/connect', { body: { nothing: true } }), 403);
  });

  it('403 for an unknown workspace, another organization’s, a key without Integration: Full or scoped to another workspace', async () => {
    expectError(await connect(svc, connection(integration, crypto.randomUUID())), 403);
    const attacker = await newAuthor(svc);
    // The attacker's key names the victim's workspace and the victim's integration.
    expectError(await connect(svc, connection(integration, svc.workspaceId), attacker.key), 403);
    const reader = (await newKey(svc, ['integration:read'], { userId: svc.userId })).key;
    expectError(await connect(svc, connection(integration, svc.workspaceId), reader), 403, 'Integration: Full');
    const other = await newWorkspace(svc);
    const scoped = (await newKey(svc, ['integration:full'], { userId: svc.userId, workspaceIds: [other] })).key;
    expectError(await connect(svc, connection(integration, svc.workspaceId), scoped), 403);
    expect((await connect(svc, connection(integration, other), scoped)).status).toBe(201);
  });

  it('400: missing name, malformed ids, neither credential, credentialData with activeCredentialId, over the limits, unknown fields', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: undefined }, 'body.connection.name'],
      [{ integrationVersionId: 'x' }, 'body.connection.integrationVersionId'],
      [{ actionVersionId: 'x' }, 'body.connection.actionVersionId'],
      [{ testActionVersionId: 'x' }, 'body.connection.testActionVersionId'],
      [{ credentialVersionId: undefined }, 'body.connection.credentialVersionId'],
      [{ activeCredentialId: crypto.randomUUID() }, 'body.connection.credentialData'],
      [
        { credentialData: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`f${i}`, 'v'])) },
        'body.connection.credentialData',
      ],
      [{ credentialData: { api_key: 'x'.repeat(65 * 1024) } }, 'body.connection.credentialData'],
      [{ workflowId: crypto.randomUUID() }, 'body.connection'],
      [{ name: 'n'.repeat(256) }, 'body.connection.name'],
      [{ testInputData: { text: 't'.repeat(64 * 1024) } }, 'body.connection.testInputData'],
    ];
    for (const [override, field] of cases) {
      const res = await connect(svc, connection(integration, svc.workspaceId, override));
      expect(res.status, `${JSON.stringify(override).slice(0, 80)}: ${res.text}`).toBe(400);
      expect(failedFields(res)).toContain(field);
    }
  });
});

describe('404 and 422', () => {
  it('404 for each unknown id; nothing is created and no smoke test runs', async () => {
    const before = [await countConnections(), await countCredentials(), endpoint.received.length];
    const unknown = crypto.randomUUID();
    for (const field of ['integrationVersionId', 'actionVersionId', 'credentialVersionId', 'testActionVersionId']) {
      const res = await connect(
        svc,
        connection(integration, svc.workspaceId, {
          testActionVersionId: integration.actionVersionId,
          [field]: unknown,
        }),
      );
      expectError(res, 404, 'does not exist');
    }
    const reuse = await connect(
      svc,
      connection(integration, svc.workspaceId, {
        credentialData: undefined,
        activeCredentialId: unknown,
        testActionVersionId: integration.actionVersionId,
      }),
    );
    expectError(reuse, 404);
    expect([await countConnections(), await countCredentials(), endpoint.received.length]).toEqual(before);
  });

  it("404 for another organization's private integration, action and credential template", async () => {
    const other = await newAuthor(svc);
    const theirs = await authorIntegration(svc, other.key);
    expectError(await connect(svc, connection(theirs, svc.workspaceId)), 404);
    expectError(
      await connect(svc, connection(integration, svc.workspaceId, { actionVersionId: theirs.actionVersionId })),
      404,
    );
    expectError(
      await connect(svc, connection(integration, svc.workspaceId, { credentialVersionId: theirs.credentialVersionId })),
      404,
    );
  });

  it('422: unknown field, wrong type, missing required value, missing credentialData; values never echoed', async () => {
    const typed = await authorIntegration(svc, svc.key, {
      inputs: {
        api_key: { displayName: 'Key', variableName: 'api_key', type: 'str', isNullable: false },
        region: { displayName: 'Region', variableName: 'region', type: 'str', default: 'eu' },
        retries: { displayName: 'Retries', variableName: 'retries', type: 'int' },
      },
    });
    const cases: Array<[unknown, string]> = [
      [{ api_key: 'sk-unknown-field-value', extra: 'sk-hidden-extra' }, 'credentialData.extra'],
      [{ api_key: 'sk-wrong-type', retries: 'three' }, 'credentialData.retries'],
      [{ api_key: null }, 'credentialData.api_key'],
      [{ retries: 3 }, 'credentialData.api_key'],
      [undefined, 'credentialData'],
    ];
    for (const [credentialData, field] of cases) {
      const res = await connect(svc, connection(typed, svc.workspaceId, { credentialData }));
      expectError(res, 422, field);
      expect(res.text).not.toMatch(/sk-hidden-extra|three/);
    }
    const ok = await connect(
      svc,
      connection(typed, svc.workspaceId, { credentialData: { api_key: 'sk-ok-value', retries: 2 } }),
    );
    expect(ok.status, ok.text).toBe(201);
  });

  it('422 when the ids belong to different integrations, for an inactive template or integration', async () => {
    const second = await authorIntegration(svc, svc.key);
    expectError(
      await connect(svc, connection(integration, svc.workspaceId, { actionVersionId: second.actionVersionId })),
      422,
      'actionVersionId',
    );
    expectError(
      await connect(svc, connection(integration, svc.workspaceId, { testActionVersionId: second.actionVersionId })),
      422,
      'testActionVersionId',
    );
    expectError(
      await connect(svc, connection(integration, svc.workspaceId, { credentialVersionId: second.credentialVersionId })),
      422,
      'credentialVersionId',
    );
    const inactiveTemplate = await authorIntegration(svc, svc.key, { credentialStatus: 'inactive' });
    expectError(await connect(svc, connection(inactiveTemplate, svc.workspaceId)), 422, 'inactive');
    const inactive = await authorIntegration(svc, svc.key, { status: 'inactive' });
    expectError(await connect(svc, connection(inactive, svc.workspaceId)), 422, 'inactive');
  });

  it('422 for a deprecated integration, and for an earlier version of one its authors have since retired; existing connections keep running', async () => {
    const deprecated = await authorIntegration(svc, svc.key, { status: 'deprecated' });
    expectError(await connect(svc, connection(deprecated, svc.workspaceId)), 422, 'deprecated');

    const retired = await authorIntegration(svc, svc.key);
    const before = await connect(svc, connection(retired, svc.workspaceId));
    expect(before.status, before.text).toBe(201);
    for (const status of ['deprecated', 'inactive']) {
      const update = await svc.request('PATCH', `/api/v1/integration/${retired.id}`, {
        body: { integration: { status } },
      });
      expect(update.status, update.text).toBe(200);
      // The connect names the first version, which still says active: the integration's current state decides.
      expectError(await connect(svc, connection(retired, svc.workspaceId)), 422, status);
    }
    const kept = await svc.request('GET', `/api/v1/connection/${String(before.body.activeIntegrationId)}`);
    expect(kept.body.status).toBe('connected');
  });
});

describe('reading and revoking', () => {
  it("another organization's key can neither read, list nor revoke; revoking is for Integration: Full and sticks", async () => {
    const res = await connect(svc, connection(integration, svc.workspaceId));
    const id = String(res.body.activeIntegrationId);
    const attacker = await newCaller(svc, ['integration:full']);
    expectError(await svc.request('GET', `/api/v1/connection/${id}`, { key: attacker.key }), 403);
    expectError(
      await svc.request('GET', `/api/v1/workspace/${svc.workspaceId}/connections`, { key: attacker.key }),
      403,
    );
    expectError(await svc.request('POST', `/api/v1/connection/${id}/revoke`, { key: attacker.key }), 403);
    expectError(await svc.request('GET', `/api/v1/connection/${crypto.randomUUID()}`), 404);
    const reader = (await newKey(svc, ['integration:read'], { userId: svc.userId })).key;
    expectError(await svc.request('POST', `/api/v1/connection/${id}/revoke`, { key: reader }), 403);

    const revoked = await svc.request('POST', `/api/v1/connection/${id}/revoke`);
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.body).toMatchObject({ id, status: 'revoked' });
    expect(revoked.body.revokedAt).toBeTypeOf('string');
    const again = await svc.request('POST', `/api/v1/connection/${id}/revoke`);
    expect(again.body).toMatchObject({ status: 'revoked', revokedAt: revoked.body.revokedAt });
  });

  it('documents the endpoints in the OpenAPI document', async () => {
    const doc = await svc.request('GET', '/openapi.json', { key: null });
    const paths = doc.body.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>;
    expect(Object.keys(paths['/api/v1/integration/connect']?.post?.responses ?? {})).toEqual(
      expect.arrayContaining(['201', '400', '401', '403', '404', '422']),
    );
    expect(paths['/api/v1/workspace/{workspaceId}/connections']?.get).toBeDefined();
    expect(paths['/api/v1/connection/{connectionId}']?.get).toBeDefined();
    expect(paths['/api/v1/connection/{connectionId}/revoke']?.post).toBeDefined();
  });
});
