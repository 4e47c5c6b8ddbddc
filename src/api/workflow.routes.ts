import { z } from 'zod';
import type { AppContext } from '../context.js';
import { assertWorkspaceGrant, requireWorkspaceGrant } from '../auth/access.js';
import type { AuthContext } from '../auth/auth-context.js';
import type { Grant } from '../auth/grants.js';
import { defaultGraph } from '../domain/default-graph.js';
import { edgeSchema, nodeSchema, type WorkflowGraph } from '../domain/graph.js';
import { validateGraph, type GraphProblem } from '../domain/graph-validation.js';
import { jobPayloadSchema, payloadSchemaSchema, resultsSchema } from '../domain/input-schema.js';
import { WorkflowRepo, type VersionPin, type WorkflowRecord, type WorkflowVersionRecord } from '../store/workflow-repo.js';
import { DomainError } from '../errors.js';
import { gateInlineSources, scanSourceOrThrow } from './python-source-gates.js';
import { integrationActionProblems } from '../connections/workflow-references.js';
import { CatalogService } from '../catalog/catalog-service.js';
import { CatalogRepo } from '../store/catalog-repo.js';
import { ConnectionRepo } from '../store/connection-repo.js';
import { parseOrThrow, type ApiRoutes } from './route.js';
import { uuid } from './schemas/common.js';

const activeStatusSchema = z.enum(['active', 'inactive']);
const nodesSchema = z.record(z.string(), nodeSchema).meta({ description: "Map keyed by node id; each key must equal the node's id" });
const edgesSchema = z
  .record(z.string(), edgeSchema)
  .meta({ description: "Map keyed by edge id; each key must equal the edge's id; from_node_id and to_node_id must name nodes in nodes" });

const createBody = z.object({
  name: z.string().trim().min(1).max(255),
  description: z.string().max(2048).optional(),
  activeStatus: activeStatusSchema.default('inactive'),
  nodes: nodesSchema.optional(),
  edges: edgesSchema.optional(),
  orgUnitIds: z.array(z.string().min(1).max(255)).max(100).optional().meta({ description: 'Best-effort tags, at most 100' }),
});

const updateBody = z
  .object({
    name: z.string().trim().min(1).max(255),
    description: z.string().max(2048),
    activeStatus: activeStatusSchema.meta({ description: "Status of the new version; defaults to the latest version's" }),
    nodes: nodesSchema.meta({ description: 'Replaces the nodes; omitted: carried over from the latest version' }),
    edges: edgesSchema.meta({ description: 'Replaces the edges; omitted: carried over from the latest version' }),
  })
  .partial();

const statusBody = z.object({
  workflowVersionId: uuid.optional(),
  workflowVersionNumber: z.number().int().min(1).optional(),
});

const workspaceHeaders = z.object({ 'x-workspace-id': uuid.meta({ description: 'Workspace to create the workflow in' }) });
const workflowParams = z.object({ workflowId: uuid.meta({ description: 'The workflowId (or the entityId) of the workflow' }) });
const versionQuery = z.object({
  version: z.coerce.number().int().min(1).optional().meta({ description: 'A version number' }),
  workflowVersionId: uuid.optional().meta({ description: 'A version id; wins over version' }),
});
const detailsQuery = versionQuery.extend({
  versionsLimit: z.coerce.number().int().min(1).max(200).default(50).meta({ description: 'Versions listed per page (default 50, at most 200)' }),
  versionsCursor: z.coerce.number().int().min(1).optional().meta({ description: 'nextVersionsCursor of the previous page' }),
});

const versionSummarySchema = z.object({
  workflowVersionId: z.string(),
  workflowVersionNumber: z.number(),
  status: activeStatusSchema,
  name: z.string(),
  description: z.string().nullable(),
  createdBy: z.string(),
  createdAt: z.string(),
});

const createdSchema = z.object({
  workflowId: z.string(),
  entityId: z.string().meta({ description: "The workflow's catalog entry id; pass it as referenceEntityId" }),
  workflowVersionId: z.string(),
  builderType: z.enum(['SERVICE_V1', 'SERVICE_V2']),
});

const detailsSchema = z.object({
  workflowId: z.string(),
  entityId: z.string(),
  workspaceId: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  builderType: z.string(),
  activeStatus: activeStatusSchema.meta({ description: 'active when a version is active (what unpinned runs use)' }),
  orgUnitIds: z.array(z.string()),
  createdAt: z.string(),
  updatedAt: z.string(),
  version: versionSummarySchema.meta({ description: 'The version described (nodes, edges, schemas): the one asked for, or the latest' }),
  latestVersion: versionSummarySchema,
  activeVersion: versionSummarySchema.nullable(),
  nodes: nodesSchema,
  edges: edgesSchema,
  jobPayloadSchema: payloadSchemaSchema,
  resultsSchema: payloadSchemaSchema,
  versions: z.array(versionSummarySchema).meta({ description: 'One page of versions, newest first (versionsLimit, versionsCursor)' }),
  nextVersionsCursor: z.number().nullable().meta({ description: 'Pass as versionsCursor for the next page; null on the last page' }),
});

const updatedSchema = z.object({
  workflowId: z.string(),
  entityId: z.string(),
  workflowVersionId: z.string(),
  workflowVersionNumber: z.number(),
  status: activeStatusSchema,
});

const statusResultSchema = z.object({
  workflowId: z.string(),
  activeStatus: activeStatusSchema,
  activeVersionId: z.string().nullable(),
  activeVersionNumber: z.number().nullable(),
});

const deprecatedDetailsSchema = z.object({
  workflowId: z.string(),
  entityId: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  versionId: z.string(),
  versionNumber: z.number(),
  activeStatus: activeStatusSchema,
  blueprint: z.object({ nodes: nodesSchema, edges: edgesSchema }),
  jobPayloadSchema: payloadSchemaSchema,
});

function summary(version: Omit<WorkflowVersionRecord, 'graph'>): z.infer<typeof versionSummarySchema> {
  return {
    workflowVersionId: version.id,
    workflowVersionNumber: version.versionNumber,
    status: version.status,
    name: version.name,
    description: version.description,
    createdBy: version.createdBy,
    createdAt: version.createdAt,
  };
}

/** Graph problems as the one 400: the problems under metadata.violations and as body fields. */
function invalidGraph(problems: GraphProblem[]): DomainError {
  const first = problems[0];
  return DomainError.validation(`Invalid workflow graph${first ? `: ${first.path}: ${first.message}` : ''}`, {
    violations: problems,
    fields: problems.map((p) => ({ field: `body.${p.path}`, message: p.message })),
  });
}

function checkedGraph(graph: WorkflowGraph): WorkflowGraph {
  const problems = validateGraph(graph);
  if (problems.length > 0) throw invalidGraph(problems);
  return graph;
}

function pinOf(query: z.infer<typeof versionQuery>): VersionPin {
  return { versionId: query.workflowVersionId, versionNumber: query.version };
}

function isPinned(pin: VersionPin): boolean {
  return pin.versionId !== undefined || pin.versionNumber !== undefined;
}

const errors = {
  400: { description: 'Malformed id or body, or the graph is invalid (metadata.violations: [{ path, message }])' },
  403: { description: 'The key lacks the grant in the workflow’s workspace, or the workflow belongs to another organization' },
  404: { description: 'The workflow or the asked version does not exist' },
};

export function registerWorkflowRoutes(api: ApiRoutes, ctx: AppContext): void {
  const repo = new WorkflowRepo(ctx.store.db);
  const references = {
    connections: new ConnectionRepo(ctx.store.db),
    catalog: new CatalogService(new CatalogRepo(ctx.store.db), (source, field) => scanSourceOrThrow(ctx, source, field)),
  };

  /** What a graph names outside itself (catalog actions, connections) must be usable by the workflow's workspace. */
  async function checkReferences(auth: AuthContext, workspaceId: string, graph: WorkflowGraph): Promise<void> {
    const problems = await integrationActionProblems(references, auth, workspaceId, graph);
    if (problems.length > 0) throw invalidGraph(problems);
  }

  /** The workflow by id or entity id (404), then the grant in its workspace (403, also for another organization's). */
  async function loadWorkflow(auth: AuthContext, workflowId: string, grant: Grant): Promise<WorkflowRecord> {
    const workflow = await repo.findWorkflowByIdOrEntityId(workflowId);
    if (!workflow) throw DomainError.notFound(`Workflow ${workflowId} does not exist`);
    assertWorkspaceGrant(auth, { id: workflow.workspaceId, organizationId: workflow.organizationId }, grant);
    return workflow;
  }

  async function pinnedVersion(workflow: WorkflowRecord, pin: VersionPin): Promise<WorkflowVersionRecord> {
    const version = await repo.findWorkflowVersion(workflow.id, pin);
    if (!version) throw DomainError.notFound(`Workflow ${workflow.id} has no version ${pin.versionId ?? `number ${pin.versionNumber}`}`);
    return version;
  }

  async function statusResult(workflowId: string): Promise<z.infer<typeof statusResultSchema>> {
    const active = await repo.latestActiveVersion(workflowId);
    return {
      workflowId,
      activeStatus: active ? 'active' : 'inactive',
      activeVersionId: active?.id ?? null,
      activeVersionNumber: active?.versionNumber ?? null,
    };
  }

  api.route({
    method: 'post',
    path: '/api/v1/workflow',
    summary: 'Create a workflow',
    description:
      'Creates version 1 of a workflow in the workspace named by x-workspace-id. Without nodes and edges the graph is an input node ' +
      '(Workflow Input) joined by one edge to an output node (Workflow Output). The graph is validated (structure, routing, ' +
      'handler configuration, data flow); problems come back as 400 with metadata.violations. Requires Workflow: Full in the workspace.',
    tags: ['Workflows'],
    auth: true,
    headers: workspaceHeaders,
    body: createBody,
    validateBody: false,
    responses: {
      201: { description: 'Created', schema: createdSchema },
      400: { description: 'Missing or malformed x-workspace-id, invalid body or graph' },
      403: { description: 'No access to the workspace or the key lacks Workflow: Full' },
      404: { description: 'The workspace does not exist' },
    },
    handler: async ({ req, res, auth }) => {
      // Contract order: the header, then access to the workspace, then the body.
      const headers = parseOrThrow(workspaceHeaders, req.headers, 'header');
      const workspace = await requireWorkspaceGrant(ctx.tenancy, auth, headers['x-workspace-id'], 'workflow:full');
      const body = parseOrThrow(createBody, req.body ?? {}, 'body');
      const graph =
        body.nodes === undefined && body.edges === undefined ? defaultGraph() : checkedGraph({ nodes: body.nodes ?? {}, edges: body.edges ?? {} });
      await gateInlineSources(ctx, auth, graph);
      await checkReferences(auth, workspace.id, graph);
      const { workflow, version } = await repo.create({
        organizationId: auth.organizationId,
        workspaceId: workspace.id,
        name: body.name,
        description: body.description,
        createdBy: auth.userId,
        graph,
        activeStatus: body.activeStatus,
        orgUnitIds: [...new Set(body.orgUnitIds ?? [])],
      });
      res.status(201).json({ workflowId: workflow.id, entityId: workflow.entityId, workflowVersionId: version.id, builderType: workflow.builderType });
    },
  });

  api.route({
    method: 'get',
    path: '/api/v1/workflow/:workflowId',
    summary: 'Get workflow details',
    description:
      'Name, description, status, the nodes and edges of one version (query workflowVersionId, or version; otherwise the latest), ' +
      'its input and results schemas, and every version. Requires Workflow: Read in the workflow’s workspace.',
    tags: ['Workflows'],
    auth: true,
    params: workflowParams,
    query: detailsQuery,
    responses: { 200: { description: 'The workflow', schema: detailsSchema }, ...errors },
    handler: async ({ res, params, query, auth }) => {
      const workflow = await loadWorkflow(auth, params.workflowId, 'workflow:read');
      const latest = await repo.latestVersion(workflow.id);
      if (!latest) throw DomainError.notFound(`Workflow ${workflow.id} has no versions`);
      const pin = pinOf(query);
      const version = isPinned(pin) ? await pinnedVersion(workflow, pin) : latest;
      const active = await repo.latestActiveVersion(workflow.id);
      const versions = await repo.listVersionSummaries(workflow.id, { limit: query.versionsLimit, beforeNumber: query.versionsCursor });
      const last = versions[versions.length - 1];
      res.json({
        workflowId: workflow.id,
        entityId: workflow.entityId,
        workspaceId: workflow.workspaceId,
        name: workflow.name,
        description: workflow.description,
        builderType: workflow.builderType,
        activeStatus: active ? 'active' : 'inactive',
        orgUnitIds: workflow.orgUnitIds,
        createdAt: workflow.createdAt,
        updatedAt: workflow.updatedAt,
        version: summary(version),
        latestVersion: summary(latest),
        activeVersion: active ? summary(active) : null,
        nodes: version.graph.nodes,
        edges: version.graph.edges,
        jobPayloadSchema: jobPayloadSchema(version.graph),
        resultsSchema: resultsSchema(version.graph),
        versions: versions.map(summary),
        nextVersionsCursor: versions.length === query.versionsLimit && last && last.versionNumber > 1 ? last.versionNumber : null,
      });
    },
  });

  api.route({
    method: 'patch',
    path: '/api/v1/workflow/:workflowId',
    summary: 'Update a workflow',
    description:
      'Any subset of name, description, nodes, edges and activeStatus. Cuts a new version (number one past the latest) from the latest ' +
      'version with the changes applied; the graph is validated like on creation. The new version is active when activeStatus says so ' +
      'or, without it, when the latest version was; an active new version deactivates the others. Earlier versions stay readable and ' +
      'runnable by pin. Requires Workflow: Full in the workflow’s workspace.',
    tags: ['Workflows'],
    auth: true,
    params: workflowParams,
    body: updateBody,
    validateBody: false,
    responses: { 200: { description: 'The new version', schema: updatedSchema }, ...errors },
    handler: async ({ req, res, params, auth }) => {
      const workflow = await loadWorkflow(auth, params.workflowId, 'workflow:full');
      const body = parseOrThrow(updateBody, req.body ?? {}, 'body');
      if (Object.values(body).every((value) => value === undefined)) {
        throw DomainError.badRequest('Send at least one of name, description, nodes, edges, activeStatus');
      }
      let graph: WorkflowGraph | undefined;
      if (body.nodes !== undefined || body.edges !== undefined) {
        const latest = await repo.latestVersion(workflow.id);
        graph = checkedGraph({ nodes: body.nodes ?? latest?.graph.nodes ?? {}, edges: body.edges ?? latest?.graph.edges ?? {} });
        await gateInlineSources(ctx, auth, graph);
        await checkReferences(auth, workflow.workspaceId, graph);
      }
      const updated = await repo.update(workflow.id, {
        name: body.name,
        description: body.description,
        graph,
        activeStatus: body.activeStatus,
        updatedBy: auth.userId,
      });
      if (!updated) throw DomainError.notFound(`Workflow ${params.workflowId} does not exist`);
      res.json({
        workflowId: workflow.id,
        entityId: workflow.entityId,
        workflowVersionId: updated.version.id,
        workflowVersionNumber: updated.version.versionNumber,
        status: updated.version.status,
      });
    },
  });

  /**
   * activate and deactivate take the same body and answer alike; they differ
   * only in what they do with the asked version (undefined when none was asked).
   */
  function statusRoute(spec: {
    path: string;
    summary: string;
    description: string;
    apply: (workflow: WorkflowRecord, version: WorkflowVersionRecord | undefined) => Promise<void>;
  }): void {
    api.route({
      method: 'post',
      path: spec.path,
      summary: spec.summary,
      description: spec.description,
      tags: ['Workflows'],
      auth: true,
      params: workflowParams,
      body: statusBody,
      validateBody: false,
      responses: { 200: { description: 'The workflow’s status after the change', schema: statusResultSchema }, ...errors },
      handler: async ({ req, res, params, auth }) => {
        const workflow = await loadWorkflow(auth, params.workflowId, 'workflow:full');
        const body = parseOrThrow(statusBody, req.body ?? {}, 'body');
        const pin = { versionId: body.workflowVersionId, versionNumber: body.workflowVersionNumber };
        await spec.apply(workflow, isPinned(pin) ? await pinnedVersion(workflow, pin) : undefined);
        res.json(await statusResult(workflow.id));
      },
    });
  }

  statusRoute({
    path: '/api/v1/workflow/:workflowId/activate',
    summary: 'Activate a workflow version',
    description:
      'Makes one version (workflowVersionId or workflowVersionNumber; by default the latest) the active one: unpinned runs use it. ' +
      'The other versions become inactive, so this is also how to roll back. Requires Workflow: Full.',
    apply: async (workflow, pinned) => {
      const version = pinned ?? (await repo.latestVersion(workflow.id));
      if (!version) throw DomainError.notFound(`Workflow ${workflow.id} has no versions`);
      await repo.setVersionStatus(workflow.id, version.id, 'active');
    },
  });

  statusRoute({
    path: '/api/v1/workflow/:workflowId/deactivate',
    summary: 'Deactivate a workflow (or one version)',
    description:
      'Without a version every version becomes inactive: unpinned runs are refused (409) until a version is activated; pinned runs ' +
      'still work. With workflowVersionId or workflowVersionNumber only that version becomes inactive. Requires Workflow: Full.',
    apply: async (workflow, pinned) => {
      if (pinned) await repo.setVersionStatus(workflow.id, pinned.id, 'inactive');
      else await repo.deactivateAllVersions(workflow.id);
    },
  });

  api.route({
    method: 'get',
    path: '/workflow/:workflowId',
    summary: 'Get a workflow with its input schema (deprecated)',
    description:
      'The workflow (name, description, blueprint of nodes and edges) with its jobPayloadSchema, keyed by variable name. ' +
      'workflowVersionId wins over version; without either the latest active version is described (409 when none is active). ' +
      'workflowId may also be the entityId. Requires Workflow: Read in the workflow’s workspace. Use GET /api/v1/workflow/{workflowId}.',
    tags: ['Deprecated'],
    deprecated: true,
    auth: true,
    params: workflowParams,
    query: versionQuery,
    responses: {
      200: { description: 'The workflow', schema: deprecatedDetailsSchema },
      ...errors,
      409: { description: 'No version is active and none was asked for (metadata.reason NO_ACTIVE_VERSION)' },
    },
    handler: async ({ res, params, query, auth }) => {
      const workflow = await loadWorkflow(auth, params.workflowId, 'workflow:read');
      const snapshot = await repo.resolveForRun(auth.organizationId, { workflowId: workflow.id }, pinOf(query));
      res.json({
        workflowId: workflow.id,
        entityId: workflow.entityId,
        name: workflow.name,
        description: workflow.description,
        versionId: snapshot.versionId,
        versionNumber: snapshot.versionNumber,
        activeStatus: snapshot.activeStatus,
        blueprint: snapshot.graph,
        jobPayloadSchema: jobPayloadSchema(snapshot.graph),
      });
    },
  });
}
