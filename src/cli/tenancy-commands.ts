import type { Command } from 'commander';
import type { KeyOptions } from './operator/tenancy-jobs.js';

/** The store is opened only when one of these runs: see operator/tenancy-jobs.ts. */
const jobs = async () => (await import('./operator/tenancy-jobs.js')).tenancyJobs;

/** `caseflow migrate|org|workspace|user|member|key`: tenancy on the store directly (docs/running.md). */
export function registerTenancyCommands(program: Command): void {
  program
    .command('migrate')
    .description('apply store migrations')
    .action(async () => (await jobs()).migrate());

  const org = program.command('org').description('organizations');
  org
    .command('create <name>')
    .option('--verified', 'allowed to author integrations and code nodes', false)
    .action(async (name: string, opts: { verified: boolean }) =>
      (await jobs()).createOrganization(name, opts.verified),
    );
  org.command('list').action(async () => (await jobs()).listOrganizations());
  org
    .command('verify <organizationId>')
    .option('--unverify', 'remove the verified mark', false)
    .action(async (id: string, opts: { unverify: boolean }) => (await jobs()).verifyOrganization(id, !opts.unverify));

  const workspace = program.command('workspace').description('workspaces');
  workspace
    .command('create <organizationId> <name>')
    .action(async (organizationId: string, name: string) => (await jobs()).createWorkspace(organizationId, name));
  workspace
    .command('list <organizationId>')
    .action(async (organizationId: string) => (await jobs()).listWorkspaces(organizationId));

  const user = program.command('user').description('users');
  user
    .command('create <email> <name>')
    .option('--org <organizationId>', 'add as a member of this organization')
    .option('--role <role>', 'owner, admin or member', 'member')
    .action(async (email: string, name: string, opts: { org?: string; role: string }) =>
      (await jobs()).createUser(email, name, opts.org, opts.role),
    );
  user
    .command('list')
    .option('--org <organizationId>', 'only members of this organization')
    .action(async (opts: { org?: string }) => (await jobs()).listUsers(opts.org));

  const member = program.command('member').description('organization memberships');
  member
    .command('add <organizationId> <userId>')
    .option('--role <role>', 'owner, admin or member', 'member')
    .action(async (organizationId: string, userId: string, opts: { role: string }) =>
      (await jobs()).addMember(organizationId, userId, opts.role),
    );
  member
    .command('remove <organizationId> <userId>')
    .description('remove a member; their keys in the organization stop working')
    .action(async (organizationId: string, userId: string) => (await jobs()).removeMember(organizationId, userId));

  const key = program.command('key').description('API keys');
  key
    .command('create')
    .requiredOption('--org <organizationId>')
    .requiredOption('--user <userId>', 'the owner (a member of the organization)')
    .requiredOption('--name <name>')
    .option('--grants <list>', `comma-separated grants, or "all"`, 'all')
    .option('--workspaces <ids>', 'comma-separated workspace ids (omit for an organization-scoped key)')
    .option('--expires-in-days <days>', 'expiry')
    .action(async (opts: KeyOptions) => (await jobs()).createKey(opts));
  key
    .command('list <organizationId>')
    .action(async (organizationId: string) => (await jobs()).listKeys(organizationId));
  key.command('revoke <keyId>').action(async (keyId: string) => (await jobs()).revokeKey(keyId));
}
