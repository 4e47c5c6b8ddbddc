import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.js';
import { createIntegration, credential, expectError, newAuthor, type Author } from './support.js';

describe('Idempotency-Key on POST /api/v1/integration', () => {
  let svc: TestService;
  let author: Author;
  const countNamed = async (name: string) =>
    (
      await svc.service.context.store.db
        .selectFrom('integration_versions')
        .select('id')
        .where('name', '=', name)
        .execute()
    ).length;
  beforeAll(async () => {
    svc = await startTestService();
    author = await newAuthor(svc);
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('returns the first result to a retry with the same key and body, creating nothing new', async () => {
    const key = crypto.randomUUID();
    const overrides = { name: `idem-${key}`, credential: credential() };
    const first = await createIntegration(svc, author, overrides, { 'Idempotency-Key': key });
    expect(first.status, first.text).toBe(201);
    expect(first.headers.get('idempotency-replayed')).toBeNull();
    const retry = await createIntegration(svc, author, overrides, { 'Idempotency-Key': key });
    expect(retry.status, retry.text).toBe(201);
    expect(retry.headers.get('idempotency-replayed')).toBe('true');
    expect(retry.body).toEqual(first.body);
    expect(await countNamed(`idem-${key}`)).toBe(1);
  });

  it('answers 422 for the same key with a different body, and creates nothing', async () => {
    const key = crypto.randomUUID();
    expect((await createIntegration(svc, author, { name: `a-${key}` }, { 'Idempotency-Key': key })).status).toBe(201);
    expectError(
      await createIntegration(svc, author, { name: `b-${key}` }, { 'Idempotency-Key': key }),
      422,
      'different request body',
    );
    expect(await countNamed(`b-${key}`)).toBe(0);
  });

  it('creates once for concurrent requests with the same key', async () => {
    const key = crypto.randomUUID();
    const results = await Promise.all(
      Array.from({ length: 5 }, () =>
        createIntegration(svc, author, { name: `race-${key}` }, { 'Idempotency-Key': key }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual([201, 201, 201, 201, 201]);
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect(await countNamed(`race-${key}`)).toBe(1);
  });

  it("keeps keys per organization: another organization's same key creates its own and never sees the first", async () => {
    const key = crypto.randomUUID();
    const other = await newAuthor(svc);
    const mine = await createIntegration(svc, author, { name: `org-${key}` }, { 'Idempotency-Key': key });
    const theirs = await createIntegration(svc, other, { name: `org-${key}` }, { 'Idempotency-Key': key });
    expect(mine.status).toBe(201);
    expect(theirs.status, theirs.text).toBe(201);
    expect(theirs.headers.get('idempotency-replayed')).toBeNull();
    expect(theirs.body.id).not.toBe(mine.body.id);
  });

  it('without a key, the same body twice creates two integrations', async () => {
    const name = `twice-${crypto.randomUUID()}`;
    const a = await createIntegration(svc, author, { name });
    const b = await createIntegration(svc, author, { name });
    expect(a.body.id).not.toBe(b.body.id);
    expect(await countNamed(name)).toBe(2);
  });

  it('does not remember a key whose request failed, and stores only hashes', async () => {
    const key = `retry-after-fix-${crypto.randomUUID()}`;
    const name = `fix-${key}`;
    expectError(await createIntegration(svc, author, { name, category: [] }, { 'Idempotency-Key': key }), 400);
    const refused = await createIntegration(
      svc,
      author,
      { name, actions: [{ name: 'x', endpoint: 'https://x', inputs: {}, outputs: {}, code: 'import os\n' }] },
      { 'Idempotency-Key': key },
    );
    expectError(refused, 400, 'security scan');
    const fixed = await createIntegration(svc, author, { name }, { 'Idempotency-Key': key });
    expect(fixed.status, fixed.text).toBe(201);
    const rows = await svc.service.context.store.db.selectFrom('integration_idempotency').selectAll().execute();
    expect(JSON.stringify(rows.map((r) => [r.key_hash, r.request_hash]))).not.toContain(key);
  });

  it('refuses a malformed key with 400', async () => {
    expectError(await createIntegration(svc, author, {}, { 'Idempotency-Key': 'has space' }), 400, 'idempotency-key');
    expectError(
      await createIntegration(svc, author, {}, { 'Idempotency-Key': 'k'.repeat(256) }),
      400,
      'idempotency-key',
    );
  });

  // Last: it closes this service's Python pool.
  it('answers 503 when the scanner is down, storing neither the integration nor the key', async () => {
    await svc.service.context.python.close();
    const key = crypto.randomUUID();
    const res = await createIntegration(svc, author, { name: `down-${key}` }, { 'Idempotency-Key': key });
    expectError(res, 503, 'scanner is unavailable');
    expect(res.headers.get('retry-after')).toBe('5');
    expect(await countNamed(`down-${key}`)).toBe(0);
    // Without action code nothing needs the scanner, and the same key is still free.
    const noCode = await createIntegration(
      svc,
      author,
      { name: `down-${key}`, actions: [] },
      { 'Idempotency-Key': key },
    );
    expect(noCode.status, noCode.text).toBe(201);
  });
});
