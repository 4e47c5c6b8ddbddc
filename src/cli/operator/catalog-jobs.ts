import { readFile } from 'node:fs/promises';
import { destination } from 'pino';
import { integrationBody, integrationDraft } from '../../api/schemas/catalog.js';
import { SourceGates } from '../../code/source-gates.js';
import { CatalogService } from '../../catalog/catalog-service.js';
import { loadConfig } from '../../config/config.js';
import { DomainError } from '../../errors.js';
import { createLogger } from '../../logging/logger.js';
import { configuredPoolOptions, PythonRunnerPool } from '../../python/pool.js';
import { CatalogRepo } from '../../store/catalog-repo.js';
import { migrateToLatest, openStore } from '../../store/database.js';
import { fail, print, sayWhileWaiting } from './output.js';

/**
 * What the catalog operator commands do, on the store directly, like the tenancy commands; publishing scans
 * action code with a one-process Python pool, exactly as the API does. Loaded only when one of them runs.
 */
async function withCatalog(needsScanner: boolean, fn: (catalog: CatalogService) => Promise<unknown>): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, {}, 'json', destination(2));
  const store = openStore(config.dataDir, config.databaseUrl);
  const python = needsScanner
    ? await PythonRunnerPool.create({
        ...configuredPoolOptions(config.python),
        size: 1,
        logger: logger.child({ component: 'python' }),
      })
    : undefined;
  let refused: string | undefined;
  try {
    await migrateToLatest(store.db, sayWhileWaiting);
    const scan = (source: string, field: string) =>
      python
        ? new SourceGates(python, logger).scanOrThrow(source, field)
        : Promise.reject(new Error('no scanner in this command'));
    print(await fn(new CatalogService(new CatalogRepo(store.db), scan)));
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    refused = `${err.message}${err.metadata ? ` ${JSON.stringify(err.metadata)}` : ''}`;
  } finally {
    await python?.close();
    await store.close();
  }
  // Exits only after the Python pool and the store are closed.
  if (refused !== undefined) fail(refused);
}

export const catalogJobs = {
  publishProvider: (name: string) => withCatalog(false, (c) => c.publishProvider(name)),
  publishedProviders: () => withCatalog(false, (c) => c.publishedProviders()),
  publishIntegration: (file: string) =>
    withCatalog(true, async (c) => {
      let json: unknown;
      try {
        json = JSON.parse(await readFile(file, 'utf8'));
      } catch (err) {
        throw DomainError.badRequest(`${file}: ${err instanceof Error ? err.message : String(err)}`);
      }
      const parsed = integrationBody.safeParse(json);
      if (!parsed.success)
        throw DomainError.badRequest(
          parsed.error.issues.map((i) => `${i.path.join('.') || 'input'}: ${i.message}`).join('; '),
        );
      return c.publishIntegration(integrationDraft(parsed.data.integration));
    }),
};
