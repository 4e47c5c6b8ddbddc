#!/usr/bin/env node
import { Command, CommanderError, Option } from 'commander';
import type { z } from 'zod';
import { ConfigError, loadConfig } from '../config/config.js';
import { createLogger } from '../logging/logger.js';
import { migrateToLatest, openStore } from '../store/database.js';
import { TenancyRepo } from '../store/tenancy-repo.js';
import { TenancyService, TenancyError } from '../tenancy/tenancy-service.js';
import {
  addMemberInput,
  createKeyInput,
  createOrganizationInput,
  createUserInput,
  createWorkspaceInput,
} from '../tenancy/schemas.js';
import { parseGrantList } from '../domain/grants.js';
import type { Role } from '../service.js';
import { printBootstrapKey } from './bootstrap-banner.js';
import { registerCatalogCommands } from './catalog-commands.js';
import { registerClientCommands } from './client/index.js';
import { exitCodes } from './client/errors.js';
import { registerSecretsCommands } from './secrets-commands.js';

function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

function fail(message: string): never {
  process.stderr.write(`caseflow: ${message}\n`);
  process.exit(1);
}

function parse<T extends z.ZodType>(schema: T, value: unknown): z.output<T> {
  const result = schema.safeParse(value);
  if (!result.success) fail(result.error.issues.map((i) => `${i.path.join('.') || 'input'}: ${i.message}`).join('; '));
  return result.data;
}

/** Operator commands work on the store directly (same data directory / DATABASE_URL as the service). */
async function withTenancy(fn: (service: TenancyService) => Promise<unknown>): Promise<void> {
  const config = loadConfig();
  const store = openStore(config.dataDir, config.databaseUrl);
  try {
    await migrateToLatest(store.db);
    const result = await fn(new TenancyService(new TenancyRepo(store.db)));
    if (result !== undefined) print(result);
  } catch (err) {
    if (err instanceof TenancyError) fail(err.message);
    throw err;
  } finally {
    await store.close();
  }
}

async function serve(role: Role): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, {}, config.logFormat);
  // Loaded here, not at the top: the whole service (Temporal, storage SDKs) costs seconds of start-up that the
  // operator commands below never need.
  const { startService } = await import('../service.js');
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

program
  .command('migrate')
  .description('apply store migrations')
  .action(() => withTenancy(() => Promise.resolve({ migrated: true })));

const org = program.command('org').description('organizations');
org
  .command('create <name>')
  .option('--verified', 'allowed to author integrations and code nodes', false)
  .action((name: string, opts: { verified: boolean }) =>
    withTenancy((s) => s.createOrganization(parse(createOrganizationInput, { name, verified: opts.verified }))),
  );
org.command('list').action(() => withTenancy((s) => s.listOrganizations()));
org
  .command('verify <organizationId>')
  .option('--unverify', 'remove the verified mark', false)
  .action((id: string, opts: { unverify: boolean }) => withTenancy(async (s) => s.setVerified(id, !opts.unverify)));

const workspace = program.command('workspace').description('workspaces');
workspace
  .command('create <organizationId> <name>')
  .action((organizationId: string, name: string) =>
    withTenancy((s) => s.createWorkspace(organizationId, parse(createWorkspaceInput, { name }))),
  );
workspace
  .command('list <organizationId>')
  .action((organizationId: string) => withTenancy((s) => s.listWorkspaces(organizationId)));

const user = program.command('user').description('users');
user
  .command('create <email> <name>')
  .option('--org <organizationId>', 'add as a member of this organization')
  .option('--role <role>', 'owner, admin or member', 'member')
  .action((email: string, name: string, opts: { org?: string; role: string }) =>
    withTenancy((s) =>
      s.createUser(parse(createUserInput, { email, name, organizationId: opts.org, role: opts.role })),
    ),
  );
user
  .command('list')
  .option('--org <organizationId>', 'only members of this organization')
  .action((opts: { org?: string }) => withTenancy((s) => s.listUsers(opts.org)));

const member = program.command('member').description('organization memberships');
member
  .command('add <organizationId> <userId>')
  .option('--role <role>', 'owner, admin or member', 'member')
  .action((organizationId: string, userId: string, opts: { role: string }) =>
    withTenancy((s) => s.addMember(organizationId, parse(addMemberInput, { userId, role: opts.role }))),
  );
member
  .command('remove <organizationId> <userId>')
  .description('remove a member; their keys in the organization stop working')
  .action((organizationId: string, userId: string) => withTenancy(async (s) => s.removeMember(organizationId, userId)));

const key = program.command('key').description('API keys');
key
  .command('create')
  .requiredOption('--org <organizationId>')
  .requiredOption('--user <userId>', 'the owner (a member of the organization)')
  .requiredOption('--name <name>')
  .option('--grants <list>', `comma-separated grants, or "all"`, 'all')
  .option('--workspaces <ids>', 'comma-separated workspace ids (omit for an organization-scoped key)')
  .option('--expires-in-days <days>', 'expiry')
  .action(
    (opts: { org: string; user: string; name: string; grants: string; workspaces?: string; expiresInDays?: string }) =>
      withTenancy(async (s) => {
        let grantList;
        try {
          grantList = parseGrantList(opts.grants);
        } catch {
          fail(`--grants: unknown grant in "${opts.grants}"`);
        }
        const days = opts.expiresInDays === undefined ? undefined : Number(opts.expiresInDays);
        if (days !== undefined && !(days > 0)) fail('--expires-in-days must be a positive number');
        const input = parse(createKeyInput, {
          organizationId: opts.org,
          userId: opts.user,
          name: opts.name,
          grants: grantList,
          workspaceIds: opts.workspaces?.split(',').map((w) => w.trim()),
          expiresAt: days === undefined ? undefined : new Date(Date.now() + days * 86_400_000).toISOString(),
        });
        const created = await s.createKey(input);
        return { key: created.key, note: 'shown once; store it now', apiKey: created.view };
      }),
  );
key.command('list <organizationId>').action((organizationId: string) => withTenancy((s) => s.listKeys(organizationId)));
key.command('revoke <keyId>').action((keyId: string) => withTenancy(async (s) => s.revokeKey(keyId)));

registerCatalogCommands(program, print, fail);
registerSecretsCommands(program, print, fail);
registerClientCommands(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) process.exit(err.exitCode === 0 ? exitCodes.ok : exitCodes.usage);
  if (err instanceof ConfigError) fail(err.message);
  throw err;
}
