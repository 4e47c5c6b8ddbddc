import type { z } from 'zod';
import type { AppContext } from '../context.js';
import type { VersionPin, WorkflowRecord } from '../domain/workflow-records.js';
import type { WorkflowStatus } from '../definitions/workflow-service.js';
import { parseOrThrow, type ApiRoutes } from './route.js';
import { errorBodySchema } from './schemas/common.js';
import {
  createdSchema,
  createWorkflowBody,
  deprecatedDetailsSchema,
  detailsQuery,
  detailsSchema,
  statusResultSchema,
  updatedSchema,
  updateWorkflowBody,
  versionQuery,
  workflowListQuery,
  workflowListSchema,
  workflowParams,
  workflowStatusBody,
  workspaceHeaders,
} from './schemas/workflows.js';
import {
  createdView,
  deprecatedDetailsView,
  detailsView,
  statusView,
  updatedView,
  workflowListView,
} from './views/workflows.js';

function pinOf(query: z.infer<typeof versionQuery>): VersionPin {
  return { versionId: query.workflowVersionId, versionNumber: query.version };
}

const errors = {
  400: { description: 'Malformed id or body, or the graph is invalid (metadata.violations: [{ path, message }])' },
  403: {
    description: 'The key lacks the grant in the workflow’s workspace, or the workflow belongs to another organization',
  },
  404: { description: 'The workflow or the asked version does not exist' },
};

export function registerWorkflowRoutes(api: ApiRoutes, ctx: AppContext): void {
  const { workflows } = ctx.services;

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
    body: createWorkflowBody,
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
      const workspace = await workflows.authorizeCreate(auth, headers['x-workspace-id']);
      const body = parseOrThrow(createWorkflowBody, req.body ?? {}, 'body');
      res.status(201).json(createdView(await workflows.create(auth, workspace, body)));
    },
  });

  api.route({
    method: 'get',
    path: '/api/v1/workflow',
    summary: 'List workflows',
    description:
      'Workflows newest first, a page at a time (cursor), in the workspaces the key reads with Workflow: Read; filters: ' +
      'workspaceId, status (active or inactive), name (part of it, any case). A workspace the key does not reach lists nothing.',
    tags: ['Workflows'],
    auth: true,
    query: workflowListQuery,
    responses: {
      200: { description: 'One page of workflows', schema: workflowListSchema },
      400: { description: 'Malformed filter, limit or cursor (metadata.fields)', schema: errorBodySchema },
      401: { description: 'Missing, invalid or expired key', schema: errorBodySchema },
      403: { description: 'The key lacks Workflow: Read', schema: errorBodySchema },
    },
    handler: async ({ res, query, auth }) => {
      res.json(workflowListView(await workflows.list(auth, query)));
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
      const details = await workflows.details(auth, params.workflowId, pinOf(query), {
        limit: query.versionsLimit,
        cursor: query.versionsCursor,
      });
      res.json(detailsView(details));
    },
  });

  api.route({
    method: 'patch',
    path: '/api/v1/workflow/:workflowId',
    summary: 'Update a workflow',
    description:
      "Any subset of name, description, nodes, edges, activeStatus and maxConcurrentCases (the workflow's own concurrency cap). Cuts a new version (number one past the latest) from the latest " +
      'version with the changes applied; the graph is validated like on creation. The new version is active when activeStatus says so ' +
      'or, without it, when the latest version was; an active new version deactivates the others. Earlier versions stay readable and ' +
      'runnable by pin. Requires Workflow: Full in the workflow’s workspace.',
    tags: ['Workflows'],
    auth: true,
    params: workflowParams,
    body: updateWorkflowBody,
    validateBody: false,
    responses: { 200: { description: 'The new version', schema: updatedSchema }, ...errors },
    handler: async ({ req, res, params, auth }) => {
      const workflow = await workflows.load(auth, params.workflowId, 'workflow:full');
      const body = parseOrThrow(updateWorkflowBody, req.body ?? {}, 'body');
      res.json(updatedView(await workflows.update(auth, workflow, body)));
    },
  });

  /**
   * activate and deactivate take the same body and answer alike; they differ
   * only in what they do with the asked version.
   */
  function statusRoute(spec: {
    path: string;
    summary: string;
    description: string;
    apply: (workflow: WorkflowRecord, pin: VersionPin) => Promise<WorkflowStatus>;
  }): void {
    api.route({
      method: 'post',
      path: spec.path,
      summary: spec.summary,
      description: spec.description,
      tags: ['Workflows'],
      auth: true,
      params: workflowParams,
      body: workflowStatusBody,
      validateBody: false,
      responses: {
        200: { description: 'The workflow’s status after the change', schema: statusResultSchema },
        ...errors,
      },
      handler: async ({ req, res, params, auth }) => {
        const workflow = await workflows.load(auth, params.workflowId, 'workflow:full');
        const body = parseOrThrow(workflowStatusBody, req.body ?? {}, 'body');
        res.json(
          statusView(
            await spec.apply(workflow, {
              versionId: body.workflowVersionId,
              versionNumber: body.workflowVersionNumber,
            }),
          ),
        );
      },
    });
  }

  statusRoute({
    path: '/api/v1/workflow/:workflowId/activate',
    summary: 'Activate a workflow version',
    description:
      'Makes one version (workflowVersionId or workflowVersionNumber; by default the latest) the active one: unpinned runs use it. ' +
      'The other versions become inactive, so this is also how to roll back. Requires Workflow: Full.',
    apply: (workflow, pin) => workflows.activate(workflow, pin),
  });

  statusRoute({
    path: '/api/v1/workflow/:workflowId/deactivate',
    summary: 'Deactivate a workflow (or one version)',
    description:
      'Without a version every version becomes inactive: unpinned runs are refused (409) until a version is activated; pinned runs ' +
      'still work. With workflowVersionId or workflowVersionNumber only that version becomes inactive. Requires Workflow: Full.',
    apply: (workflow, pin) => workflows.deactivate(workflow, pin),
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
      const { workflow, snapshot } = await workflows.runnable(auth, params.workflowId, pinOf(query));
      res.json(deprecatedDetailsView(workflow, snapshot));
    },
  });
}
