import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CodeNodeRepo } from '../../src/store/code-node-repo.js';
import { answered, startTestService, type TestService } from '../support/harness.js';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres.js';
import {
  codeBody,
  expectError,
  expectRefused,
  field,
  validSource,
  type CodeNodeBody,
  type CodeNodePatch,
} from './support.js';
import { clientFor, newCaller } from '../support/keys.js';

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
    const create = (body: CodeNodeBody = codeBody(), client = svc.client) =>
      answered(client.POST('/api/v1/code', { body }), 201);
    const update = (codeId: string, body: CodeNodePatch, client = svc.client) =>
      client.PATCH('/api/v1/code/{codeId}', { params: { path: { codeId } }, body });

    it('cuts a new versionId on every update and keeps every earlier version readable', async () => {
      const { id: codeId, versionId: v1, versionNumber } = await create();
      expect(versionNumber).toBe(1);

      // providerId is not in the document and is ignored: sent from a variable, which the type does not check for extras.
      const withProvider = { name: 'Renamed', providerId: randomUUID() };
      const renamed = await answered(update(codeId, withProvider), 200);
      expect(renamed).toMatchObject({
        id: codeId,
        versionNumber: 2,
        name: 'Renamed',
        sourceCode: validSource,
        description: 'Doubles a count',
      });
      expect(renamed).not.toHaveProperty('providerId');
      const v2 = renamed.versionId;

      const again = await answered(update(codeId, { name: 'Renamed' }), 200);
      const v3 = again.versionId;
      expect(new Set([v1, v2, v3]).size).toBe(3);
      expect(again.versionNumber).toBe(3);

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
      const created = await create(
        codeBody({ tags: ['t'], inputs: { count: field('count', ['int']), extra: field('extra') } }),
      );
      const res = await answered(
        update(created.id, {
          sourceCode: secondSource,
          inputs: { text: field('text') },
          outputs: { result: field('result') },
          description: null,
        }),
        200,
      );
      expect(res.inputs).toEqual({ text: field('text') });
      expect(res.outputs).toEqual({ result: field('result') });
      expect(res).toMatchObject({
        sourceCode: secondSource,
        name: 'Double',
        tags: ['t'],
        categories: ['math'],
        description: null,
      });
      const before = await repo.findVersion(created.versionId);
      expect(Object.keys(before?.inputs ?? {})).toEqual(['count', 'extra']);
      expect(before?.sourceCode).toBe(validSource);
    });

    it("answers 404 for another organization's code node and for an unknown id, 400 for a malformed one", async () => {
      const other = await newCaller(svc, ['code:full']);
      const theirClient = clientFor(svc, other.key);
      const { id: theirId } = await create(codeBody(), theirClient);
      await expectRefused(update(theirId, { name: 'taken' }), 404);
      expect((await repo.findLatest(theirId))?.versionNumber).toBe(1);
      await expectRefused(update(randomUUID(), { name: 'x' }), 404);
      // A codeId that is not a uuid is what the document forbids: sent untyped.
      expectError(await svc.request('PATCH', '/api/v1/code/not-a-uuid', { body: { name: 'x' } }), 400, 'path.codeId');
      await answered(update(theirId, { name: 'theirs v2' }, theirClient), 200);
    });

    it('refuses an update with nothing to update and changes nothing on a bad body', async () => {
      const { id: codeId } = await create();
      // Bodies the document forbids (no field, a name over its limit) go untyped.
      expectError(await svc.request('PATCH', `/api/v1/code/${codeId}`, { body: {} }), 400, 'nothing to update');
      expectError(
        await svc.request('PATCH', `/api/v1/code/${codeId}`, { body: { providerId: randomUUID() } }),
        400,
        'nothing to update',
      );
      await expectRefused(update(codeId, { inputs: { a: field('b') } }), 400, 'must equal its map key');
      expectError(
        await svc.request('PATCH', `/api/v1/code/${codeId}`, { body: { name: 'n'.repeat(256) } }),
        400,
        'body.name',
      );
      expect((await repo.findLatest(codeId))?.versionNumber).toBe(1);
    });

    it('gives concurrent updates distinct consecutive versions', async () => {
      const { id: codeId } = await create();
      const results = await Promise.all(
        Array.from({ length: 4 }, (_, i) => answered(update(codeId, { name: `parallel ${i}` }), 200)),
      );
      expect(results.map((r) => r.versionNumber).sort()).toEqual([2, 3, 4, 5]);
      expect(new Set(results.map((r) => r.versionId)).size).toBe(4);
    });
  });
}

versionSuite('code node versions (SQLite)', async () => undefined);
versionSuite('code node versions (Postgres)', createPostgresSchema);
