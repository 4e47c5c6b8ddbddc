import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CatalogService } from '../../src/catalog/catalog-service.js';
import { CatalogRepo } from '../../src/store/catalog-repo.js';
import { newAuthor, pngIcon } from '../catalog/support.js';
import { clientFor, newCaller, newKey, newWorkspace } from '../support/keys.js';
import { answered, refused, startTestService, type TestService } from '../support/harness.js';
import {
  authorIntegration,
  connect,
  connection,
  expectError,
  expectRefused,
  failedFields,
  localServer,
  type ConnectionInput,
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
    const res = await answered(connect(svc, connection(integration, svc.workspaceId)), 201);
    expect(res).toMatchObject({
      status: 'connected',
      activeIntegrationVersionId: integration.versionId,
      workspaceId: svc.workspaceId,
      testPassed: null,
      testError: null,
      authorizationUrl: null,
      connectionToken: null,
    });
    expect(res.activeIntegrationId).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.activeCredentialId).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.stringify(res)).not.toContain(secret);

    const connectionId = String(res.activeIntegrationId);
    const read = await answered(
      svc.client.GET('/api/v1/connection/{connectionId}', { params: { path: { connectionId } } }),
      200,
    );
    expect(read).toMatchObject({
      id: connectionId,
      status: 'connected',
      name: 'My connection',
      activeCredentialId: res.activeCredentialId,
    });
    expect(JSON.stringify(read)).not.toContain(secret);
    const list = await answered(
      svc.client.GET('/api/v1/workspace/{workspaceId}/connections', {
        params: { path: { workspaceId: svc.workspaceId } },
      }),
      200,
    );
    expect(list.connections.map((c) => c.id)).toContain(connectionId);
    expect(JSON.stringify(list)).not.toContain(secret);
  });

  it('is not idempotent: the same body twice makes two connections with two credentials', async () => {
    const body = connection(integration, svc.workspaceId);
    const first = await answered(connect(svc, body), 201);
    const second = await answered(connect(svc, body), 201);
    expect(first.activeIntegrationId).not.toBe(second.activeIntegrationId);
    expect(first.activeCredentialId).not.toBe(second.activeCredentialId);
  });

  it('encrypts credentialData at rest: the raw row and the SQLite files hold no plaintext', async () => {
    const marker = `marker-${crypto.randomUUID()}`;
    const res = await answered(
      connect(svc, connection(integration, svc.workspaceId, { credentialData: { api_key: marker } })),
      201,
    );
    const row = await svc.service.context.store.db
      .selectFrom('connection_credentials')
      .selectAll()
      .where('id', '=', res.activeCredentialId)
      .executeTakeFirstOrThrow();
    expect(row.data_ciphertext).toMatch(/^v1:[A-Za-z0-9_-]+:[A-Za-z0-9_-]+$/);
    expect(JSON.stringify(row)).not.toContain(marker);
    for (const file of readdirSync(svc.dataDir).filter((f) => f.startsWith('caseflow.db'))) {
      expect(readFileSync(path.join(svc.dataDir, file)).includes(marker), file).toBe(false);
    }
  });

  it('reuses a credential with activeCredentialId (same workspace only)', async () => {
    const first = await answered(connect(svc, connection(integration, svc.workspaceId)), 201);
    const reuse = {
      credentialVersionId: undefined,
      credentialData: undefined,
      activeCredentialId: first.activeCredentialId,
    };
    const reused = await answered(connect(svc, connection(integration, svc.workspaceId, reuse)), 201);
    expect(reused.activeCredentialId).toBe(first.activeCredentialId);
    expect(reused.activeIntegrationId).not.toBe(first.activeIntegrationId);

    const other = await newWorkspace(svc);
    await expectRefused(connect(svc, connection(integration, other, reuse)), 404, 'does not exist');
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
    const pending = await answered(
      connect(
        svc,
        connection(oauth, svc.workspaceId, {
          credentialData: { client_id: 'id-1234', client_secret: 'secret-5678' },
          testActionVersionId: oauth.actionVersionId,
        }),
      ),
      201,
    );
    expect(pending).toMatchObject({
      status: 'pending_authorization',
      activeIntegrationId: null,
      testPassed: null,
    });
    // The flow itself is tested in oauth.test.ts.
    expect(String(pending.authorizationUrl)).toMatch(/^https:\/\/provider\.example\/authorize\?/);
    expect(pending.connectionToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    await expectRefused(
      connect(svc, connection(oauth, svc.workspaceId, { credentialData: { client_id: 'id-1234' } })),
      422,
      'client_secret',
    );
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
    const made = await answered(
      connect(svc, connection(ids, workspace, { testActionVersionId: ids.actionVersionId }), tenant.key),
      201,
    );
    expect(made).toMatchObject({ status: 'connected', testPassed: true });
    await expectRefused(connect(svc, connection(ids, svc.workspaceId), tenant.key), 403);
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
    const send = (body: unknown) => svc.request('POST', '/api/v1/integration/connect', { body });
    expectError(await send({ connection: { workspaceId: 'not-a-uuid', integrationVersionId: 'also-bad' } }), 403);
    expectError(await send({ nothing: true }), 403);
  });

  it('403 for an unknown workspace, another organization’s, a key without Integration: Full or scoped to another workspace', async () => {
    await expectRefused(connect(svc, connection(integration, crypto.randomUUID())), 403);
    const attacker = await newAuthor(svc);
    // The attacker's key names the victim's workspace and the victim's integration.
    await expectRefused(connect(svc, connection(integration, svc.workspaceId), attacker.key), 403);
    const reader = (await newKey(svc, ['integration:read'], { userId: svc.userId })).key;
    await expectRefused(connect(svc, connection(integration, svc.workspaceId), reader), 403, 'Integration: Full');
    const other = await newWorkspace(svc);
    const scoped = (await newKey(svc, ['integration:full'], { userId: svc.userId, workspaceIds: [other] })).key;
    await expectRefused(connect(svc, connection(integration, svc.workspaceId), scoped), 403);
    await answered(connect(svc, connection(integration, other), scoped), 201);
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
    // Bodies the document forbids, sent as they are.
    for (const [override, field] of cases) {
      const res = await svc.request('POST', '/api/v1/integration/connect', {
        body: { connection: { ...connection(integration, svc.workspaceId), ...override } },
      });
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
      await expectRefused(
        connect(
          svc,
          connection(integration, svc.workspaceId, {
            testActionVersionId: integration.actionVersionId,
            [field]: unknown,
          }),
        ),
        404,
        'does not exist',
      );
    }
    await expectRefused(
      connect(
        svc,
        connection(integration, svc.workspaceId, {
          credentialData: undefined,
          activeCredentialId: unknown,
          testActionVersionId: integration.actionVersionId,
        }),
      ),
      404,
    );
    expect([await countConnections(), await countCredentials(), endpoint.received.length]).toEqual(before);
  });

  it("404 for another organization's private integration, action and credential template", async () => {
    const other = await newAuthor(svc);
    const theirs = await authorIntegration(svc, other.key);
    await expectRefused(connect(svc, connection(theirs, svc.workspaceId)), 404);
    await expectRefused(
      connect(svc, connection(integration, svc.workspaceId, { actionVersionId: theirs.actionVersionId })),
      404,
    );
    await expectRefused(
      connect(svc, connection(integration, svc.workspaceId, { credentialVersionId: theirs.credentialVersionId })),
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
    const cases: Array<[ConnectionInput['credentialData'], string]> = [
      [{ api_key: 'sk-unknown-field-value', extra: 'sk-hidden-extra' }, 'credentialData.extra'],
      [{ api_key: 'sk-wrong-type', retries: 'three' }, 'credentialData.retries'],
      [{ api_key: null }, 'credentialData.api_key'],
      [{ retries: 3 }, 'credentialData.api_key'],
      [undefined, 'credentialData'],
    ];
    for (const [credentialData, field] of cases) {
      const error = JSON.stringify(
        await refused(connect(svc, connection(typed, svc.workspaceId, { credentialData })), 422),
      );
      expect(error).toContain(field);
      expect(error).not.toMatch(/sk-hidden-extra|three/);
    }
    await answered(
      connect(svc, connection(typed, svc.workspaceId, { credentialData: { api_key: 'sk-ok-value', retries: 2 } })),
      201,
    );
  });

  it('422 when the ids belong to different integrations, for an inactive template or integration', async () => {
    const second = await authorIntegration(svc, svc.key);
    for (const field of ['actionVersionId', 'testActionVersionId', 'credentialVersionId'] as const) {
      const id = field === 'credentialVersionId' ? second.credentialVersionId : second.actionVersionId;
      await expectRefused(connect(svc, connection(integration, svc.workspaceId, { [field]: id })), 422, field);
    }
    const inactiveTemplate = await authorIntegration(svc, svc.key, { credentialStatus: 'inactive' });
    await expectRefused(connect(svc, connection(inactiveTemplate, svc.workspaceId)), 422, 'inactive');
    const inactive = await authorIntegration(svc, svc.key, { status: 'inactive' });
    await expectRefused(connect(svc, connection(inactive, svc.workspaceId)), 422, 'inactive');
  });

  it('422 for a deprecated integration, and for an earlier version of one its authors have since retired; existing connections keep running', async () => {
    const deprecated = await authorIntegration(svc, svc.key, { status: 'deprecated' });
    await expectRefused(connect(svc, connection(deprecated, svc.workspaceId)), 422, 'deprecated');

    const retired = await authorIntegration(svc, svc.key);
    const before = await answered(connect(svc, connection(retired, svc.workspaceId)), 201);
    for (const status of ['deprecated', 'inactive'] as const) {
      await answered(
        svc.client.PATCH('/api/v1/integration/{integrationId}', {
          params: { path: { integrationId: retired.id } },
          body: { integration: { status } },
        }),
        200,
      );
      // The connect names the first version, which still says active: the integration's current state decides.
      await expectRefused(connect(svc, connection(retired, svc.workspaceId)), 422, status);
    }
    const connectionId = String(before.activeIntegrationId);
    const kept = await answered(
      svc.client.GET('/api/v1/connection/{connectionId}', { params: { path: { connectionId } } }),
      200,
    );
    expect(kept.status).toBe('connected');
  });
});

describe('reading and revoking', () => {
  it("another organization's key can neither read, list nor revoke; revoking is for Integration: Full and sticks", async () => {
    const res = await answered(connect(svc, connection(integration, svc.workspaceId)), 201);
    const byId = { params: { path: { connectionId: String(res.activeIntegrationId) } } };
    const attacker = clientFor(svc, (await newCaller(svc, ['integration:full'])).key);
    await expectRefused(attacker.GET('/api/v1/connection/{connectionId}', byId), 403);
    await expectRefused(
      attacker.GET('/api/v1/workspace/{workspaceId}/connections', {
        params: { path: { workspaceId: svc.workspaceId } },
      }),
      403,
    );
    await expectRefused(attacker.POST('/api/v1/connection/{connectionId}/revoke', byId), 403);
    await expectRefused(
      svc.client.GET('/api/v1/connection/{connectionId}', { params: { path: { connectionId: crypto.randomUUID() } } }),
      404,
    );
    const reader = clientFor(svc, (await newKey(svc, ['integration:read'], { userId: svc.userId })).key);
    await expectRefused(reader.POST('/api/v1/connection/{connectionId}/revoke', byId), 403);

    const revoked = await answered(svc.client.POST('/api/v1/connection/{connectionId}/revoke', byId), 200);
    expect(revoked).toMatchObject({ id: res.activeIntegrationId, status: 'revoked' });
    expect(revoked.revokedAt).toBeTypeOf('string');
    const again = await answered(svc.client.POST('/api/v1/connection/{connectionId}/revoke', byId), 200);
    expect(again).toMatchObject({ status: 'revoked', revokedAt: revoked.revokedAt });
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
