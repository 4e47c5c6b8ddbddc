import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdempotentRequests } from '../../src/idempotency/idempotent-requests.js';
import { openStore } from '../../src/store/database.js';
import { IdempotencyRepo } from '../../src/store/idempotency-repo.js';
import { newCaller } from '../support/keys.js';
import { answered, http, startTestService, type TestResponse, type TestService } from '../support/harness.js';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres.js';
import { createWorkflow, waitForEnd } from './support.js';
import { Graph } from '../support/graphs.js';

function echoGraph(): Graph {
  const g = new Graph();
  g.edge(g.input([{ name: 'greeting' }]), g.output([{ name: 'greeting' }]));
  return g;
}

describe.each([
  ['SQLite on disk', false],
  ['Postgres', true],
])('Idempotency-Key on case starts, two API instances on one store (%s)', (_name, postgres) => {
  let schema: PostgresSchema | undefined;
  let first: TestService;
  let second: TestService;
  let workflowId: string;
  let otherOrgKey: string;

  beforeAll(async () => {
    schema = postgres ? await createPostgresSchema() : undefined;
    const databaseUrl = schema?.url;
    first = await startTestService(databaseUrl ? { databaseUrl } : {});
    second = await startTestService({
      role: 'api',
      dataDir: first.dataDir,
      taskQueue: first.taskQueue,
      ...(databaseUrl ? { databaseUrl } : {}),
    });
    workflowId = (await createWorkflow(first, echoGraph(), 'idempotent')).workflowId;
    otherOrgKey = (await newCaller(first, ['case:full', 'workflow:full'])).key;
  });
  afterAll(async () => {
    await second?.stop();
    await first?.stop();
    await schema?.drop();
  });

  /** A request with the bootstrap key (or `key`) to `first` or `second` in turn; raw, as the tests read its replay headers. */
  const call = (
    i: number,
    path: string,
    body: unknown,
    idempotencyKey: string | undefined,
    key?: string,
  ): Promise<TestResponse> =>
    http(`${(i % 2 === 0 ? first : second).url}${path}`, 'POST', {
      key: key ?? first.key,
      body,
      headers: idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey },
    });

  const casesOf = async (title: string): Promise<string[]> => {
    const list = await answered(
      first.client.GET('/api/v1/case', { params: { query: { workflowId, limit: 100 } } }),
      200,
    );
    return list.cases.filter((c) => c.title === title).map((c) => c.caseId);
  };

  it('answers a retry of an initiation with the first answer and creates nothing', async () => {
    const key = randomUUID();
    const body = { workflowId, title: `retry-${key}` };
    const a = await call(0, '/api/v1/case', body, key);
    expect(a.status, a.text).toBe(201);
    expect(a.headers.get('idempotency-replayed')).toBeNull();
    // The same body in another key order is the same request.
    const b = await call(1, '/api/v1/case', { title: body.title, workflowId }, key);
    expect(b.status, b.text).toBe(201);
    expect(b.headers.get('idempotency-replayed')).toBe('true');
    expect(b.body).toEqual(a.body);
    expect(await casesOf(body.title)).toEqual([a.body.caseId]);
    // Without a key every request creates.
    expect((await call(0, '/api/v1/case', body, undefined)).status).toBe(201);
    expect(await casesOf(body.title)).toHaveLength(2);
  });

  it('writes a start and its replay as JSON with their length and no ETag; a read keeps its ETag', async () => {
    const key = randomUUID();
    const body = { workflowId, title: `headers-${key}` };
    for (const answer of [await call(0, '/api/v1/case', body, key), await call(1, '/api/v1/case', body, key)]) {
      expect(answer.status, answer.text).toBe(201);
      expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(answer.headers.get('content-length')).toBe(String(Buffer.byteLength(answer.text)));
      expect(answer.text).toBe(JSON.stringify(answer.body));
      expect(answer.headers.get('etag')).toBeNull();
    }
    const read = await http(`${first.url}/api/v1/case?workflowId=${workflowId}`, 'GET', { key: first.key });
    expect(read.status, read.text).toBe(200);
    expect(read.headers.get('etag')).toMatch(/^W\/"/);
  });

  it('refuses the same key with another body (409) and creates nothing', async () => {
    const key = randomUUID();
    const title = `other-body-${key}`;
    expect((await call(0, '/api/v1/case', { workflowId, title }, key)).status).toBe(201);
    const other = await call(1, '/api/v1/case', { workflowId, title, description: 'changed' }, key);
    expect(other.status, other.text).toBe(409);
    expect(other.body).toMatchObject({ errorCode: 'CONFLICT', path: '/api/v1/case' });
    expect(String(other.body.message)).toMatch(/different request/);
    // Another route with the same key is another request too.
    const job = await call(0, '/job/initiate', { workflowId, title }, key);
    expect(job.status, job.text).toBe(409);
    expect(await casesOf(title)).toHaveLength(1);
  });

  it('starts exactly one case for identical requests sent at once to both instances', async () => {
    const key = randomUUID();
    const body = { workflowId, title: `race-${key}` };
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => call(i, '/api/v1/case', body, key)));
    for (const answer of answers) expect(answer.status, answer.text).toBe(201);
    const ids = new Set(answers.map((answer) => answer.body.caseId));
    expect(ids.size).toBe(1);
    expect(answers.filter((answer) => answer.headers.get('idempotency-replayed') === 'true')).toHaveLength(5);
    expect(await casesOf(body.title)).toEqual([...ids]);
  });

  it('runs an execution once: concurrent retries get its 202, a later one too, without a 409', async () => {
    const init = await call(0, '/api/v1/case', { workflowId }, undefined);
    const caseId = String(init.body.caseId);
    const key = randomUUID();
    const path = `/api/v1/case/${caseId}/execute`;
    const body = { inputs: { greeting: 'once' } };
    const answers = await Promise.all([0, 1, 2].map((i) => call(i, path, body, key)));
    for (const answer of answers) expect(answer.status, answer.text).toBe(202);
    expect(new Set(answers.map((answer) => JSON.stringify(answer.body))).size).toBe(1);
    expect((await waitForEnd(first, caseId)).status).toBe('COMPLETED');
    const later = await call(1, path, body, key);
    expect(later.status).toBe(202);
    expect(later.body).toEqual(answers[0]?.body);
    // Without the key the case is already executed.
    expect((await call(0, path, body, undefined)).status).toBe(409);
    expect((await call(0, path, { inputs: { greeting: 'twice' } }, key)).status).toBe(409);
  });

  it('keeps keys per organization: another organization never sees the first answer', async () => {
    const key = randomUUID();
    const body = { workflowId, title: `scoped-${key}` };
    expect((await call(0, '/api/v1/case', body, key)).status).toBe(201);
    const attacker = await call(1, '/api/v1/case', body, key, otherOrgKey);
    expect(attacker.status, attacker.text).toBe(404);
    expect(attacker.headers.get('idempotency-replayed')).toBeNull();
  });

  it('answers the deprecated job initiation the same way; a refused request frees its key', async () => {
    const key = randomUUID();
    const missing = await call(0, '/job/initiate', { workflowId: randomUUID() }, key);
    expect(missing.status).toBe(404);
    const a = await call(1, '/job/initiate', { workflowId, title: `job-${key}` }, key);
    expect(a.status, a.text).toBe(201);
    const b = await call(0, '/job/initiate', { workflowId, title: `job-${key}` }, key);
    expect(b.body).toEqual(a.body);
    expect(b.headers.get('idempotency-replayed')).toBe('true');
    const bad = await call(0, '/api/v1/case', { workflowId }, 'has spaces');
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body.metadata)).toContain('header.idempotency-key');
  });

  it('forgets keys after 24 h and purges them from the store', async () => {
    const store = openStore(first.dataDir, schema?.url);
    try {
      let now = Date.now();
      const requests = new IdempotentRequests(new IdempotencyRepo(store.db), {}, () => now);
      const keyed = { organizationId: first.organizationId, scope: 'api', key: `purge-${randomUUID()}`, request: 1 };
      let runs = 0;
      const produce = () => Promise.resolve({ status: 201, body: { run: ++runs } });
      expect((await requests.run(keyed, produce)).answer.body).toEqual({ run: 1 });
      expect((await requests.run(keyed, produce)).replayed).toBe(true);
      now += 24 * 3600_000 + 61_000;
      const fresh = new IdempotentRequests(new IdempotencyRepo(store.db), {}, () => now);
      const after = await fresh.run(keyed, produce);
      expect(after).toEqual({ answer: { status: 201, body: { run: 2 } }, replayed: false });
      const left = await store.db
        .selectFrom('idempotency_keys')
        .select('created_at')
        .where('created_at', '<', new Date(now - 24 * 3600_000).toISOString())
        .execute();
      expect(left).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
