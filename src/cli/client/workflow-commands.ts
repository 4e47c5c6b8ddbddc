import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import type { WorkflowGraph } from '../../domain/graph.js';
import { compileWorkflow } from '../../workflow-files/compile.js';
import { decompileWorkflow } from '../../workflow-files/decompile.js';
import { apiCatalog } from './catalog-lookup.js';
import { z } from 'zod';
import { clientAction, noOptions } from './command.js';
import { CliError } from './errors.js';
import { indent } from './output.js';
import type { Session } from './session.js';

/** JSON with object keys sorted: two graphs are the same when these are equal, whatever their key order. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/** The YAML library loads only for the commands that read or write files (start-up time of the others). */
const yamlText = () => import('../../workflow-files/text.js');

function details(session: Session, workflowId: string) {
  return session.call(session.client.GET('/api/v1/workflow/{workflowId}', { params: { path: { workflowId } } }));
}

async function apply(session: Session, file: string) {
  const text = await readFile(file, 'utf8').catch((err: unknown) => {
    throw new CliError(`cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`);
  });
  const dir = path.dirname(path.resolve(file));
  const { parseWorkflowFile } = await yamlText();
  const parsed = parseWorkflowFile(text);
  const workspaceId = await session.workspaceId();
  const existing = await session.findWorkflow(parsed.name);
  const current = existing && (await details(session, existing.workflowId));
  const compiled = await compileWorkflow(parsed, {
    catalog: apiCatalog(session, current).ids,
    readFile: (relative) => readFile(path.resolve(dir, relative), 'utf8'),
  });
  const activeStatus = compiled.active ? ('active' as const) : ('inactive' as const);
  const { nodes, edges } = compiled.graph;
  if (!existing || !current) {
    const created = await session.call(
      session.client.POST('/api/v1/workflow', {
        params: { header: { 'x-workspace-id': workspaceId } },
        body: { name: compiled.name, description: compiled.description, activeStatus, nodes, edges },
      }),
    );
    return { action: 'created' as const, workflowId: created.workflowId, versionNumber: 1, activeStatus };
  }
  const graphChanged = canonical({ nodes, edges }) !== canonical({ nodes: current.nodes, edges: current.edges });
  const descriptionChanged = (compiled.description ?? null) !== current.description;
  if (graphChanged || descriptionChanged) {
    const updated = await session.call(
      session.client.PATCH('/api/v1/workflow/{workflowId}', {
        params: { path: { workflowId: existing.workflowId } },
        body: {
          ...(graphChanged ? { nodes, edges } : {}),
          ...(descriptionChanged ? { description: compiled.description ?? '' } : {}),
          activeStatus,
        },
      }),
    );
    return {
      action: 'updated' as const,
      workflowId: existing.workflowId,
      versionNumber: updated.workflowVersionNumber,
      activeStatus,
    };
  }
  // The same graph: no new version; only the active state follows the file.
  const latest = current.latestVersion.workflowVersionNumber;
  if ((current.latestVersion.status === 'active') !== compiled.active) {
    const workflowId = existing.workflowId;
    const body = { workflowVersionNumber: latest };
    await session.call(
      compiled.active
        ? session.client.POST('/api/v1/workflow/{workflowId}/activate', { params: { path: { workflowId } }, body })
        : session.client.POST('/api/v1/workflow/{workflowId}/deactivate', { params: { path: { workflowId } }, body }),
    );
  }
  return { action: 'unchanged' as const, workflowId: existing.workflowId, versionNumber: latest, activeStatus };
}

async function exportFile(session: Session, ref: string, format: 'yaml' | 'json') {
  const found = await session.requireWorkflow(ref);
  const workflow = await details(session, found.workflowId);
  const graph: WorkflowGraph = { nodes: workflow.nodes, edges: workflow.edges };
  const file = await decompileWorkflow(
    {
      name: workflow.name,
      description: workflow.description,
      active: workflow.latestVersion.status === 'active',
      graph,
    },
    apiCatalog(session).names,
  );
  return (await yamlText()).formatWorkflowFile(file, format);
}

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
      const result = await apply(session(), opts.file);
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
      const text = await exportFile(session(), ref, opts.format);
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
      const w = await details(s, (await s.requireWorkflow(ref)).workflowId);
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
