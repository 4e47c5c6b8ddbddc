import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { WorkflowGraph } from '../../domain/graph.js';
import { compileWorkflow } from '../../workflow-files/compile.js';
import { decompileWorkflow } from '../../workflow-files/decompile.js';
import { formatWorkflowFile, parseWorkflowFile } from '../../workflow-files/text.js';
import { apiCatalog } from './catalog-lookup.js';
import { CliError } from './errors.js';
import type { Session } from './session.js';

/*
 * What `workflow apply|export` run: workflow-commands.ts imports this module when one of them runs, so the
 * compiler and the YAML library cost the start-up of no other command.
 */

/** JSON with object keys sorted: two graphs are the same when these are equal, whatever their key order. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/** `workflow apply`: creates or updates the workflow the file describes; a new version only when it changed. */
export async function apply(session: Session, file: string) {
  const text = await readFile(file, 'utf8').catch((err: unknown) => {
    throw new CliError(`cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`);
  });
  const dir = path.dirname(path.resolve(file));
  const parsed = parseWorkflowFile(text);
  const workspaceId = await session.workspaceId();
  const existing = await session.findWorkflow(parsed.name);
  const current = existing && (await session.workflowDetails(existing.workflowId));
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

/** `workflow export`: the latest version as a file's text. */
export async function exportFile(session: Session, ref: string, format: 'yaml' | 'json') {
  const found = await session.requireWorkflow(ref);
  const workflow = await session.workflowDetails(found.workflowId);
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
  return formatWorkflowFile(file, format);
}
