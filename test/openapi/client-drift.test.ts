import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument, clientSchemaPath, generateClientSchema } from '../../scripts/generate-client.js';
import { startTestService, type TestService } from '../support/harness.js';

describe('the typed client (src/client)', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => {
    await svc.stop();
  });

  it('is generated from the current document: run `npm run client:generate` when this fails', async () => {
    expect(await readFile(clientSchemaPath, 'utf8')).toBe(await generateClientSchema());
  });

  it('is generated from the document the running service serves', async () => {
    const served = (await svc.request('GET', '/openapi.json', { key: null })).body;
    const built = buildOpenApiDocument();
    // Only the server URL differs: the running one listens on its own port.
    expect({ ...served, servers: [] }).toEqual({ ...built, servers: [] });
  });
});
