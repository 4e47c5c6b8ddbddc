import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { z } from 'zod';
import type { paths } from '../../client/index.js';
import { clientAction, pairs } from './command.js';
import { CliError } from './errors.js';
import { collectPair } from './inputs.js';
import type { Session } from './session.js';

type IntegrationBody = paths['/api/v1/integration']['post']['requestBody']['content']['application/json'];

/** The provider of that name in the key's organization, made when there is none. */
async function providerId(session: Session, name: string): Promise<string> {
  const { providers } = await session.call(session.client.GET('/api/v1/provider'));
  const found = providers.find((p) => p.name === name);
  if (found) return found.id;
  return (await session.call(session.client.POST('/api/v1/provider', { body: { name } }))).id;
}

/** An integration the key reads, by id or exact name: its latest version with its actions and credential templates. */
async function integrationNamed(session: Session, ref: string) {
  for (let offset = 0; ; offset += 200) {
    const page = await session.call(
      session.client.GET('/api/v1/integration', { params: { query: { limit: 200, offset } } }),
    );
    const found = page.integrations.find((i) => i.id === ref || i.name === ref);
    if (found)
      return session.call(
        session.client.GET('/api/v1/integration/{integrationId}', { params: { path: { integrationId: found.id } } }),
      );
    if (page.integrations.length < 200) throw new CliError(`no integration named "${ref}"`);
  }
}

/** `caseflow integration create` and `caseflow connection create`: author an integration, connect it to the workspace. */
export function registerIntegrationCommands(program: Command): void {
  clientAction(
    program
      .command('integration')
      .description('integrations of the organization’s catalog (docs/catalog.md)')
      .command('create')
      .description('author an integration from a JSON file: the body of POST /api/v1/integration without providerId')
      .requiredOption('-f, --file <file>', 'the integration (JSON)')
      .option('--provider <name>', 'the provider it is listed under (made when missing)', 'Local'),
    z.tuple([z.object({ file: z.string(), provider: z.string() })]),
    async ({ session, out }, [opts]) => {
      const s = session();
      const text = await readFile(opts.file, 'utf8').catch((err: unknown) => {
        throw new CliError(`cannot read ${opts.file}: ${err instanceof Error ? err.message : String(err)}`);
      });
      let integration: unknown;
      try {
        integration = JSON.parse(text);
      } catch (err) {
        throw new CliError(`${opts.file}: not JSON (${err instanceof Error ? err.message : String(err)})`);
      }
      if (typeof integration !== 'object' || integration === null || Array.isArray(integration))
        throw new CliError(`${opts.file}: an object, the integration`);
      // The service checks every field of the body (400 naming each); the CLI only adds the provider.
      const body = {
        integration: { ...integration, providerId: await providerId(s, opts.provider) },
      } as IntegrationBody;
      const created = await s.call(s.client.POST('/api/v1/integration', { body }));
      out.result(created, () => [
        `created integration ${created.id} "${created.name}", version ${created.versionId}`,
        ...created.createdActions.map((a) => `  action "${a.name}": version ${a.actionVersionId}`),
        ...(created.createdCredential ? [`  credential "${created.createdCredential.name}"`] : []),
      ]);
    },
  );

  clientAction(
    program
      .command('connection')
      .description('connections of the workspace (docs/connections.md)')
      .command('create <integration>')
      .description('connect an integration (id or name) to the workspace, enabling one of its actions')
      .requiredOption('--name <name>', 'the connection’s name, as workflow files refer to it')
      .requiredOption('--action <action>', 'the action it enables (name)')
      .option('-d, --data <name=value>', 'a credential value (repeatable)', collectPair),
    z.tuple([z.string(), z.object({ name: z.string(), action: z.string(), data: pairs })]),
    async ({ session, out }, [ref, opts]) => {
      const s = session();
      const integration = await integrationNamed(s, ref);
      const action = integration.actions.find((a) => a.name === opts.action);
      if (!action)
        throw new CliError(
          `integration "${integration.name}" has no action "${opts.action}"`,
          undefined,
          integration.actions.map((a) => a.name),
        );
      const [credential, ...others] = integration.credentials;
      if (!credential || others.length > 0)
        throw new CliError(
          `integration "${integration.name}" has ${integration.credentials.length} credential templates, not one`,
        );
      const connected = await s.call(
        s.client.POST('/api/v1/integration/connect', {
          body: {
            connection: {
              name: opts.name,
              workspaceId: await s.workspaceId(),
              integrationVersionId: integration.versionId,
              actionVersionId: action.versionId,
              credentialVersionId: credential.versionId,
              credentialData: Object.fromEntries(opts.data ?? []),
            },
          },
        }),
      );
      out.result(connected, () => [`connected "${opts.name}": connection ${connected.activeIntegrationId}`]);
    },
  );
}
