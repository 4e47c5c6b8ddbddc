import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CodeNodeRepo } from '../../src/store/code-node-repo.js';
import { startTestService, type TestService } from '../support/harness.js';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres.js';
import { codeBody, expectError, field, validSource } from './support.js';
import { newCaller } from '../support/keys.js';

const secondSource = ['def main(inputs):', "    return {'result': str(inputs['text']).upper()}", ''].join('\n');

function versionSuite(name: string, database: () => Promise<PostgresSchema | undefined>): void {
  describe(name, () => {
    let svc: TestService;
    let schema: PostgresSchema | undefined;
    let repo: CodeNodeRepo;
    beforeAll(async () => {
      schema = await database();
      svc = await startTestService(schema ? { databaseUrl: schema.url } : {});
      repo = new CodeNodeRepo(svc.service.context.store.db);
    });
    afterAll(async () => {
      await svc?.stop();
      await schema?.drop();
    });

    it('cuts a new versionId on every update and keeps every earlier version readable', async () => {
      const created = await svc.request('POST', '/api/v1/code', { body: codeBody() });
      expect(created.status, created.text).toBe(201);
      const codeId = String(created.body.id);
      const v1 = String(created.body.versionId);
      expect(created.body.versionNumber).toBe(1);

      const renamed = await svc.request('PATCH', `/api/v1/code/${codeId}`, {
        body: { name: 'Renamed', providerId: randomUUID() },
      });
      expect(renamed.status, renamed.text).toBe(200);
      expect(renamed.body).toMatchObject({
        id: codeId,
        versionNumber: 2,
        name: 'Renamed',
        sourceCode: validSource,
        description: 'Doubles a count',
      });
      expect(renamed.body).not.toHaveProperty('providerId');
      const v2 = String(renamed.body.versionId);

      const again = await svc.request('PATCH', `/api/v1/code/${codeId}`, { body: { name: 'Renamed' } });
      expect(again.status).toBe(200);
      const v3 = String(again.body.versionId);
      expect(new Set([v1, v2, v3]).size).toBe(3);
      expect(again.body.versionNumber).toBe(3);

      const first = await repo.findVersion(v1);
      expect(first).toMatchObject({
        id: codeId,
        versionId: v1,
        versionNumber: 1,
        organizationId: svc.organizationId,
        name: 'Double',
        sourceCode: validSource,
      });
      expect(first?.inputs.count).toEqual(field('count', ['int']));
      expect((await repo.findVersion(v2))?.name).toBe('Renamed');
      expect((await repo.findLatest(codeId))?.versionId).toBe(v3);
      expect(await repo.findVersion(randomUUID())).toBeUndefined();
      expect((await repo.findVersionIn(svc.organizationId, codeId, v1))?.sourceCode).toBe(validSource);
      expect(await repo.findVersionIn(randomUUID(), codeId, v1)).toBeUndefined();
      expect(await repo.findVersionIn(svc.organizationId, randomUUID(), v1)).toBeUndefined();
    });

    it('replaces sourceCode, inputs and outputs wholesale, carrying the rest over', async () => {
      const created = await svc.request('POST', '/api/v1/code', {
        body: codeBody({ tags: ['t'], inputs: { count: field('count', ['int']), extra: field('extra') } }),
      });
      const codeId = String(created.body.id);
      const res = await svc.request('PATCH', `/api/v1/code/${codeId}`, {
        body: {
          sourceCode: secondSource,
          inputs: { text: field('text') },
          outputs: { result: field('result') },
          description: null,
        },
      });
      expect(res.status, res.text).toBe(200);
      expect(res.body.inputs).toEqual({ text: field('text') });
      expect(res.body.outputs).toEqual({ result: field('result') });
      expect(res.body).toMatchObject({
        sourceCode: secondSource,
        name: 'Double',
        tags: ['t'],
        categories: ['math'],
        description: null,
      });
      const before = await repo.findVersion(String(created.body.versionId));
      expect(Object.keys(before?.inputs ?? {})).toEqual(['count', 'extra']);
      expect(before?.sourceCode).toBe(validSource);
    });

    it("answers 404 for another organization's code node and for an unknown id, 400 for a malformed one", async () => {
      const other = await newCaller(svc, ['code:full']);
      const theirs = await svc.request('POST', '/api/v1/code', { body: codeBody(), key: other.key });
      expect(theirs.status, theirs.text).toBe(201);
      const theirId = String(theirs.body.id);
      expectError(await svc.request('PATCH', `/api/v1/code/${theirId}`, { body: { name: 'taken' } }), 404);
      expect((await repo.findLatest(theirId))?.versionNumber).toBe(1);
      expectError(await svc.request('PATCH', `/api/v1/code/${randomUUID()}`, { body: { name: 'x' } }), 404);
      expectError(await svc.request('PATCH', '/api/v1/code/not-a-uuid', { body: { name: 'x' } }), 400, 'path.codeId');
      const own = await svc.request('PATCH', `/api/v1/code/${theirId}`, {
        body: { name: 'theirs v2' },
        key: other.key,
      });
      expect(own.status).toBe(200);
    });

    it('refuses an update with nothing to update and changes nothing on a bad body', async () => {
      const created = await svc.request('POST', '/api/v1/code', { body: codeBody() });
      const codeId = String(created.body.id);
      expectError(await svc.request('PATCH', `/api/v1/code/${codeId}`, { body: {} }), 400, 'nothing to update');
      expectError(
        await svc.request('PATCH', `/api/v1/code/${codeId}`, { body: { providerId: randomUUID() } }),
        400,
        'nothing to update',
      );
      expectError(
        await svc.request('PATCH', `/api/v1/code/${codeId}`, { body: { inputs: { a: field('b') } } }),
        400,
        'must equal its map key',
      );
      expectError(
        await svc.request('PATCH', `/api/v1/code/${codeId}`, { body: { name: 'n'.repeat(256) } }),
        400,
        'body.name',
      );
      expect((await repo.findLatest(codeId))?.versionNumber).toBe(1);
    });

    it('gives concurrent updates distinct consecutive versions', async () => {
      const created = await svc.request('POST', '/api/v1/code', { body: codeBody() });
      const codeId = String(created.body.id);
      const results = await Promise.all(
        Array.from({ length: 4 }, (_, i) =>
          svc.request('PATCH', `/api/v1/code/${codeId}`, { body: { name: `parallel ${i}` } }),
        ),
      );
      for (const r of results) expect(r.status, r.text).toBe(200);
      expect(results.map((r) => r.body.versionNumber).sort()).toEqual([2, 3, 4, 5]);
      expect(new Set(results.map((r) => r.body.versionId)).size).toBe(4);
    });
  });
}

versionSuite('code node versions (SQLite)', async () => undefined);
versionSuite('code node versions (Postgres)', createPostgresSchema);
