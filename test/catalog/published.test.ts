import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFor, newCaller } from '../support/keys.js';
import { answered, refused, startTestService, type TestService } from '../support/harness.js';
import { action, credential, integration, newAuthor, type Created } from './support.js';

const run = promisify(execFile);
const projectRoot = path.resolve(import.meta.dirname, '../..');

describe('integrations published by the service (operator CLI)', () => {
  let svc: TestService;
  let providerId: string;
  let published: Pick<Created, 'id' | 'versionId' | 'createdActions' | 'createdCredential'>;
  /** The built CLI on the service's own data directory; stdout is JSON. */
  const cli = async (...args: string[]) => {
    const { stdout } = await run('node', [path.join(projectRoot, 'dist/src/cli/main.js'), ...args], {
      env: { ...process.env, CASEFLOW_DATA_DIR: svc.dataDir },
    });
    return JSON.parse(stdout) as Record<string, unknown>;
  };
  const bodyFile = (name: string, body: unknown) => {
    const file = path.join(svc.dataDir, name);
    writeFileSync(file, JSON.stringify(body));
    return file;
  };
  beforeAll(async () => {
    svc = await startTestService();
    const provider = await cli('catalog', 'provider', 'Caseflow');
    expect(provider.organizationId).toBeNull();
    providerId = String(provider.id);
    const listed = (await cli('catalog', 'providers')) as unknown as Array<{ id: string }>;
    expect(listed.map((p) => p.id)).toEqual([providerId]);
    // The command prints what was created: the integration version, createdActions and createdCredential.
    const out = (await cli(
      'catalog',
      'publish',
      bodyFile('pub.json', {
        integration: integration(providerId, { name: 'Published echo', credential: credential() }),
      }),
    )) as unknown as {
      integration: { id: string; versionId: string; organizationId: string | null };
    } & Pick<Created, 'createdActions' | 'createdCredential'>;
    expect(out.integration.organizationId).toBeNull();
    published = {
      id: out.integration.id,
      versionId: out.integration.versionId,
      createdActions: out.createdActions,
      createdCredential: out.createdCredential,
    };
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('is visible to every organization, with its actions and credential templates', async () => {
    const reader = await newCaller(svc, ['integration:read'], { verified: false });
    const client = clientFor(svc, reader.key);
    const list = await answered(client.GET('/api/v1/integration'), 200);
    expect(list.integrations).toEqual([
      expect.objectContaining({ id: published.id, published: true, name: 'Published echo' }),
    ]);
    const detail = await answered(
      client.GET('/api/v1/integration/v/{integrationVersionId}', {
        params: { path: { integrationVersionId: published.versionId } },
      }),
      200,
    );
    expect(detail).toMatchObject({
      published: true,
      actions: [{ versionId: published.createdActions[0]?.actionVersionId }],
    });
    await answered(
      client.GET('/api/v1/integration/credential/v/{credentialVersionId}', {
        params: { path: { credentialVersionId: published.createdCredential?.credentialVersionId ?? '' } },
      }),
      200,
    );
  });

  it('cannot be changed by an organization, nor can its provider be borrowed', async () => {
    const author = await newAuthor(svc);
    const client = clientFor(svc, author.key);
    const renamed = await refused(
      client.PATCH('/api/v1/integration/{integrationId}', {
        params: { path: { integrationId: published.id } },
        body: { integration: { name: 'mine' } },
      }),
      403,
    );
    expect(renamed.statusCode).toBe(403);
    const cred = await refused(
      client.POST('/api/v1/integration/v/{integrationVersionId}/credential', {
        params: { path: { integrationVersionId: published.versionId } },
        body: { credential: credential({ authType: 'jwt' }) },
      }),
      403,
    );
    expect(cred.message).toContain('another organization');
    const borrow = await refused(
      client.POST('/api/v1/integration', { body: { integration: integration(providerId) } }),
      403,
    );
    expect(borrow.message).toContain('another organization');
    const providers = await answered(client.GET('/api/v1/provider'), 200);
    expect(providers.providers.map((p) => p.id)).not.toContain(providerId);
  });

  it('scans published action code too and publishes nothing when it is refused', async () => {
    const file = bodyFile('bad.json', {
      integration: integration(providerId, {
        name: 'Refused',
        actions: [action(), action({ code: 'import subprocess\n' })],
      }),
    });
    const failure = await run('node', [path.join(projectRoot, 'dist/src/cli/main.js'), 'catalog', 'publish', file], {
      env: { ...process.env, CASEFLOW_DATA_DIR: svc.dataDir },
    }).then(
      () => undefined,
      (err: unknown) => err as { code: number; stderr: string },
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toContain('subprocess');
    const rows = await svc.service.context.store.db
      .selectFrom('integration_versions')
      .select('id')
      .where('name', '=', 'Refused')
      .execute();
    expect(rows).toEqual([]);
  });

  it('publishes only under a provider of the service', async () => {
    const author = await newAuthor(svc);
    const file = bodyFile('theirs.json', { integration: integration(author.providerId) });
    const failure = await run('node', [path.join(projectRoot, 'dist/src/cli/main.js'), 'catalog', 'publish', file], {
      env: { ...process.env, CASEFLOW_DATA_DIR: svc.dataDir },
    }).then(
      () => undefined,
      (err: unknown) => err as { code: number; stderr: string },
    );
    expect(failure?.stderr).toContain('another organization');
  });
});
