#!/usr/bin/env node
import { Command, CommanderError, Option } from 'commander';
import type { Role } from '../service.js';
import { registerCatalogCommands } from './catalog-commands.js';
import { registerClientCommands } from './client/index.js';
import { exitCodes } from './client/errors.js';
import { fail } from './operator/output.js';
import { registerSecretsCommands } from './secrets-commands.js';
import { registerTenancyCommands } from './tenancy-commands.js';

/*
 * Only commander and the command definitions load at start: every command imports what it runs when it runs
 * (the service, the store, Temporal, the storage SDKs cost seconds that `--help` and the client commands never
 * need). test/cli/startup.test.ts keeps it so.
 */

async function serve(role: Role): Promise<void> {
  const [{ loadConfig }, { createLogger }, { printBootstrapKey }, { startService }] = await Promise.all([
    import('../config/config.js'),
    import('../logging/logger.js'),
    import('./bootstrap-banner.js'),
    import('../service.js'),
  ]);
  const config = loadConfig();
  const logger = createLogger(config.logLevel, {}, config.logFormat);
  const service = await startService({ config, logger, role, onBootstrap: printBootstrapKey });
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    service.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

// exitOverride: usage errors end with their own exit code (docs/cli.md), not commander's 1.
const program = new Command('caseflow')
  .description('caseflow workflow automation service')
  .showHelpAfterError()
  .exitOverride();

program
  .command('serve')
  .description('run the service (API and worker; embedded Temporal when TEMPORAL_ADDRESS is unset)')
  .addOption(
    new Option('--role <role>', 'what this process runs')
      .choices(['api', 'worker', 'all'])
      .default(process.env.CASEFLOW_ROLE ?? 'all'),
  )
  .action((opts: { role: Role }) => serve(opts.role));

// The service's process builds only `serve`: the other commands' definitions (their options' zod schemas, ~1.6 MB
// of heap) would stay resident in it for nothing. Any other first argument (`--help` included) gets them all.
if (process.argv[2] !== 'serve') {
  registerTenancyCommands(program);
  registerCatalogCommands(program);
  registerSecretsCommands(program);
  registerClientCommands(program);
}

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) process.exit(err.exitCode === 0 ? exitCodes.ok : exitCodes.usage);
  // A configuration the operator commands cannot start with: its message, not a stack.
  if (err instanceof Error && err.name === 'ConfigError') fail(err.message);
  throw err;
}
