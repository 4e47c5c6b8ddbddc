import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CatalogRepo } from '../../src/store/catalog-repo.js';
import { answered, startTestService, type TestService } from '../support/harness.js';
import { clientFor } from '../support/keys.js';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres.js';
import {
  action,
  createIntegration,
  created,
  credential,
  expectError,
  expectRollbackHalfWay,
  integration,
  newAuthor,
  readIntegration,
  type Author,
} from './support.js';

describe('the catalog on Postgres', () => {
  let schema: PostgresSchema;
  let svc: TestService;
  let author: Author;
  beforeAll(async () => {
    schema = await createPostgresSchema();
    svc = await startTestService({ databaseUrl: schema.url });
    author = await newAuthor(svc);
  });
  afterAll(async () => {
    await svc?.stop();
    await schema?.drop();
  });

  it('creates all or nothing, and reads back actions and credentials', async () => {
    const ok = await created(svc, author, { actions: [action(), action({ name: 'Two' })], credential: credential() });
    expect(await readIntegration(svc, author.key, ok.id)).toMatchObject({
      versionId: ok.versionId,
      actions: [{ name: 'Echo' }, { name: 'Two' }],
      credentials: [{ authType: 'api_key' }],
    });
    const name = `refused-${crypto.randomUUID()}`;
    expectError(
      await createIntegration(svc, author, { name, actions: [action(), action({ code: 'import subprocess\n' })] }),
      400,
      'security scan',
    );
    expect(
      await svc.service.context.store.db
        .selectFrom('integration_versions')
        .select('id')
        .where('name', '=', name)
        .execute(),
    ).toEqual([]);
  });

  it('rolls back the whole creation when a write fails half-way', async () => {
    await expectRollbackHalfWay(svc, author);
  });

  it('creates once for concurrent requests with one Idempotency-Key, and replays it', async () => {
    const key = crypto.randomUUID();
    const body = { integration: integration(author.providerId, { name: `race-${key}` }) };
    const results = await Promise.all(
      Array.from({ length: 5 }, () =>
        clientFor(svc, author.key).POST('/api/v1/integration', {
          body,
          params: { header: { 'idempotency-key': key } },
        }),
      ),
    );
    expect(results.map((r) => r.response.status)).toEqual([201, 201, 201, 201, 201]);
    expect(new Set(results.map((r) => r.data?.id)).size).toBe(1);
    expect(results.filter((r) => r.response.headers.get('idempotency-replayed') === 'true')).toHaveLength(4);
    expect(
      await svc.service.context.store.db
        .selectFrom('integration_versions')
        .select('id')
        .where('name', '=', `race-${key}`)
        .execute(),
    ).toHaveLength(1);
  });

  it('keeps one credential per authType under concurrency, and versions under concurrent updates', async () => {
    const fresh = await created(svc, author);
    const client = clientFor(svc, author.key);
    const creds = await Promise.all(
      Array.from({ length: 4 }, () =>
        client.POST('/api/v1/integration/v/{integrationVersionId}/credential', {
          params: { path: { integrationVersionId: fresh.versionId } },
          body: { credential: credential() },
        }),
      ),
    );
    expect(creds.map((r) => r.response.status).sort()).toEqual([201, 409, 409, 409]);
    const updates = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        answered(
          client.PATCH('/api/v1/integration/{integrationId}', {
            params: { path: { integrationId: fresh.id } },
            body: { integration: { name: `n${i}` } },
          }),
          200,
        ),
      ),
    );
    expect(updates.map((r) => r.versionNumber).sort()).toEqual([2, 3, 4, 5]);
  });

  it('keeps an integration at 50 actions when additions race for the last place', async () => {
    const fresh = await created(svc, author, {
      actions: Array.from({ length: 49 }, (_, i) => action({ name: `a${i}`, code: undefined })),
    });
    const adds = await Promise.all(
      Array.from({ length: 3 }, (_, i) =>
        clientFor(svc, author.key).POST('/api/v1/integration/v/{integrationVersionId}/action', {
          params: { path: { integrationVersionId: fresh.versionId } },
          body: { action: action({ name: `r${i}`, code: undefined }) },
        }),
      ),
    );
    expect(adds.map((r) => r.response.status).sort()).toEqual([201, 400, 400]);
    expect((await readIntegration(svc, author.key, fresh.id)).actions).toHaveLength(50);
  });

  it("lists own and published integrations, never another organization's", async () => {
    const repo = new CatalogRepo(svc.service.context.store.db);
    const provider = await repo.createProvider(null, null, 'Service');
    const draft = {
      providerId: provider.id,
      content: {
        name: 'Published',
        description: null,
        icon: 'x',
        category: ['a'],
        requiredPlan: 'core' as const,
        status: 'active' as const,
        isNew: false,
        isPopular: false,
        isBeta: false,
      },
      actions: [],
      credential: null,
    };
    const pub = await repo.createIntegration(null, null, draft);
    const other = await newAuthor(svc);
    const theirs = await created(svc, other);
    const list = await answered(clientFor(svc, author.key).GET('/api/v1/integration'), 200);
    const ids = list.integrations.map((i) => i.id);
    expect(ids).toContain(pub.integration.id);
    expect(ids).not.toContain(theirs.id);
  });
});
