import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { z } from 'zod';
import { clientAction, noOptions } from './command.js';
import { CliError } from './errors.js';
import { indent } from './output.js';

/** The workflow file compiler and the YAML library load only for `apply` and `export` (start-up of the others). */
const jobs = () => import('./workflow-file-jobs.js');

/** `caseflow workflow apply|export|list|show`. */
export function registerWorkflowCommands(program: Command): void {
  const workflow = program.command('workflow').description('workflows: apply files, export, list, show');

  clientAction(
    workflow
      .command('apply')
      .description('create or update the workflow a file describes (by name); a new version only when it changed')
      .requiredOption('-f, --file <file>', 'the workflow file (YAML or JSON)'),
    z.tuple([z.object({ file: z.string() })]),
    async ({ session, out }, [opts]) => {
      const result = await (await jobs()).apply(session(), opts.file);
      out.result(result, () => [
        `${result.action} workflow ${result.workflowId}: version ${result.versionNumber}, ${result.activeStatus}`,
      ]);
    },
  );

  clientAction(
    workflow
      .command('export <workflow>')
      .description('write a workflow (id or name) as a file, the latest version')
      .option('-o, --output <file>', 'write to this file instead of stdout')
      .option('--format <format>', 'yaml or json', 'yaml'),
    z.tuple([z.string(), z.object({ output: z.string().optional(), format: z.string() })]),
    async ({ session }, [ref, opts]) => {
      if (opts.format !== 'yaml' && opts.format !== 'json') throw new CliError('--format: yaml or json');
      const text = await (await jobs()).exportFile(session(), ref, opts.format);
      if (opts.output) await writeFile(opts.output, text);
      else process.stdout.write(text);
    },
  );

  clientAction(
    workflow.command('list').description('the workflows the key reads, newest first').option('--name <part>', 'filter'),
    z.tuple([z.object({ name: z.string().optional() })]),
    async ({ session, out }, [opts]) => {
      const s = session();
      const page = await s.call(
        s.client.GET('/api/v1/workflow', { params: { query: { name: opts.name, limit: 100 } } }),
      );
      out.result(page.workflows, () =>
        page.workflows.map((w) => `${w.workflowId}  v${w.latestVersionNumber}  ${w.activeStatus.padEnd(8)}  ${w.name}`),
      );
    },
  );

  clientAction(
    workflow.command('show <workflow>').description('a workflow (id or name): versions, inputs, results, nodes'),
    z.tuple([z.string(), noOptions]),
    async ({ session, out }, [ref]) => {
      const s = session();
      const w = await s.workflowDetails((await s.requireWorkflow(ref)).workflowId);
      out.result(w, () => [
        `${w.name}  (${w.workflowId})`,
        `latest version ${w.latestVersion.workflowVersionNumber}, active version ${w.activeVersion?.workflowVersionNumber ?? 'none'}`,
        'inputs:',
        ...indent(Object.entries(w.jobPayloadSchema).map(([k, v]) => `${k}: ${v.type}`)),
        'results:',
        ...indent(Object.entries(w.resultsSchema).map(([k, v]) => `${k}: ${v.type}`)),
        'nodes:',
        ...indent(Object.values(w.nodes).map((n) => `${n.name} (${n.handler_class ?? n.type})`)),
      ]);
    },
  );
}
