import type { Command } from 'commander';

/** The store and the Python pool are loaded only when one of these runs: see operator/catalog-jobs.ts. */
const jobs = async () => (await import('./operator/catalog-jobs.js')).catalogJobs;

/**
 * Operator commands of the catalog: what the service itself publishes is visible to, and connectable by, every
 * organization.
 */
export function registerCatalogCommands(program: Command): void {
  const catalog = program.command('catalog').description('integrations published by the service to every organization');
  catalog
    .command('provider <name>')
    .description('create a provider of the service (integrations published under it are visible to every organization)')
    .action(async (name: string) => (await jobs()).publishProvider(name));
  catalog
    .command('providers')
    .description('list the providers of the service')
    .action(async () => (await jobs()).publishedProviders());
  catalog
    .command('publish <file>')
    .description(
      'publish an integration from a JSON file shaped like the body of POST /api/v1/integration; its providerId is a service provider',
    )
    .action(async (file: string) => (await jobs()).publishIntegration(file));
}
