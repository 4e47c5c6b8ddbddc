import type { Command } from 'commander';
import { z } from 'zod';
import { clientAction } from './command.js';
import { Session } from './session.js';
import { defaultUrl, saveSettings, settingsPath } from './settings.js';

/** `caseflow login --key KEY [--url URL] [--workspace ID]`: checks the key, then keeps it in the config file. */
export function registerLoginCommand(program: Command): void {
  clientAction(
    program
      .command('login')
      .description('check a key against the service and keep it (and the URL) in the config file')
      .requiredOption('--key <key>', 'the API key (the first start prints one)')
      .option('--url <url>', 'the service', process.env.CASEFLOW_URL ?? defaultUrl)
      .option('--workspace <id>', 'the workspace new workflows go to (default: the key’s only one)'),
    z.tuple([z.object({ key: z.string(), url: z.string(), workspace: z.string().optional() })]),
    async ({ out }, [opts]) => {
      const settings = {
        url: opts.url.replace(/\/+$/, ''),
        apiKey: opts.key,
        ...(opts.workspace ? { workspace: opts.workspace } : {}),
      };
      const session = new Session(settings);
      const me = await session.call(session.client.GET('/api/v1/me'));
      const file = settingsPath();
      saveSettings(file, settings);
      out.result({ file, organizationId: me.organizationId, workspaces: me.workspaces }, () => [
        `saved to ${file} (readable by you only)`,
        `organization ${me.organizationId}; workspaces: ${me.workspaces.map((w) => w.name).join(', ')}`,
        'next: caseflow workflow apply -f examples/hello-python.yaml',
      ]);
    },
  );
}
