import express, { type Request, type RequestHandler, type Response } from 'express';
import type { AppContext } from '../context.js';
import { DomainError } from '../errors.js';
import { readableBody } from './request-body.js';
import { parseOrThrow, type ApiRoutes } from './route.js';
import {
  bpmnBody,
  createProcessBody,
  discoveredProcessSchema,
  importQuery,
  importResultSchema,
  processParams,
  readQuery,
  snapshotSchema,
  updateProcessBody,
  workspaceHeaders,
} from './schemas/discovery.js';

/** BPMN files carry diagram layout and grow past the JSON limit; this bounds what one import reads. */
const bpmnBodyLimit = '5mb';
const bpmnMediaTypes = ['application/xml', 'text/xml', 'application/bpmn+xml'];
const readXml: RequestHandler = express.text({ type: bpmnMediaTypes, limit: bpmnBodyLimit });

/** Reads the XML body only after the caller was authorized, so an unauthorized upload is never buffered. */
async function xmlBody(req: Request, res: Response): Promise<string> {
  if (!req.is(bpmnMediaTypes)) {
    throw new DomainError('UNSUPPORTED_MEDIA_TYPE', `Send the BPMN document as ${bpmnMediaTypes.join(', ')}`);
  }
  await new Promise<void>((resolve, reject) =>
    readXml(req, res, (err?: unknown) =>
      err ? reject(err instanceof Error ? err : new Error('Unreadable body', { cause: err })) : resolve(),
    ),
  );
  return typeof req.body === 'string' ? req.body : '';
}

const authoringErrors = {
  403: {
    description: 'The key lacks Discovery: Full in the workspace, or the process belongs to another organization',
  },
};

export function registerDiscoveryRoutes(api: ApiRoutes, ctx: AppContext): void {
  const { discovery } = ctx.services;
  const common = { tags: ['Discovery'], auth: true as const };

  api.route({
    ...common,
    method: 'post',
    path: '/api/v1/discovery/process',
    summary: 'Create a discovered process',
    description:
      'Stores a process (steps, customEdges, { id, text } lists, branches) in the workspace named by x-workspace-id. Validated: shapes and ' +
      'limits, unique step / edge / list-entry ids, edges between existing steps, consistent branch fields (source, rejoin, order), ' +
      'duration ranges with min ≤ max, a parentProcessId the key can read. Requires Discovery: Full in the workspace.',
    headers: workspaceHeaders,
    body: createProcessBody,
    validateBody: false,
    responses: {
      201: { description: 'Created: the process as the read returns it', schema: discoveredProcessSchema },
      400: {
        description:
          'Missing or malformed x-workspace-id, or an invalid process (metadata.violations: [{ path, message }])',
      },
      ...authoringErrors,
      404: { description: 'The workspace does not exist' },
      413: { description: 'The body is over the JSON body limit' },
    },
    handler: async ({ req, res, auth }) => {
      const headers = parseOrThrow(workspaceHeaders, req.headers, 'header');
      const workspaceId = await discovery.authoringWorkspace(auth, headers['x-workspace-id']);
      res.status(201).json(await discovery.create(auth, workspaceId, readableBody(req.body) ?? {}));
    },
  });

  api.route({
    ...common,
    method: 'post',
    path: '/api/v1/discovery/process/import',
    summary: 'Import a process from BPMN 2.0 XML',
    description:
      'Maps a BPMN 2.0 document (as Camunda Modeler, bpmn.io, Signavio or a process-mining tool exports it) to a discovered process and ' +
      'stores it like a create: tasks → steps, sequence flows → customEdges, split gateways → branches, lanes → performers and ' +
      `departments, data objects → inputs / outputs, data stores → integrations (docs/discovery.md). At most ${bpmnBodyLimit}; a DOCTYPE ` +
      'is refused (no DTDs, no entities). Requires Discovery: Full in the workspace.',
    headers: workspaceHeaders,
    query: importQuery,
    body: bpmnBody,
    bodyMediaType: 'application/xml',
    validateBody: false,
    responses: {
      201: { description: 'Imported: the stored process and what was dropped', schema: importResultSchema },
      400: {
        description:
          'Malformed x-workspace-id, XML not well-formed or with a DOCTYPE, not BPMN, or the mapped process is invalid',
      },
      ...authoringErrors,
      404: { description: 'The workspace does not exist' },
      413: { description: `The document is over ${bpmnBodyLimit}` },
      415: { description: 'The body is not application/xml, text/xml or application/bpmn+xml' },
    },
    handler: async ({ req, res, query, auth }) => {
      const headers = parseOrThrow(workspaceHeaders, req.headers, 'header');
      const workspaceId = await discovery.authoringWorkspace(auth, headers['x-workspace-id']);
      const xml = await xmlBody(req, res);
      res.status(201).json(await discovery.importBpmn(auth, workspaceId, xml, { bpmnProcessId: query.bpmnProcessId }));
    },
  });

  api.route({
    ...common,
    method: 'get',
    path: '/api/v1/discovery/process/:processId',
    summary: 'Get a discovered process',
    description:
      'The process with its steps, edges and lists; processIntegrations merges every step’s integrations in. With processVersionId, the ' +
      'saved snapshot instead of the current state (same shape). Requires Discovery: Read in the owning workspace.',
    params: processParams,
    query: readQuery,
    responses: {
      200: { description: 'The process', schema: discoveredProcessSchema },
      400: { description: 'processId or processVersionId is not a UUID' },
      403: {
        description: 'The process belongs to another organization, or the key lacks Discovery: Read in its workspace',
      },
      404: { description: 'The process does not exist, or the version does not belong to it' },
    },
    handler: async ({ res, params, query, auth }) => {
      res.json(await discovery.read(auth, params.processId, query.processVersionId));
    },
  });

  api.route({
    ...common,
    method: 'patch',
    path: '/api/v1/discovery/process/:processId',
    summary: 'Update a discovered process',
    description:
      'Any subset of the top-level fields; lists are replaced wholesale; the merged process is validated like a create. Snapshots taken ' +
      'before keep what they held. Requires Discovery: Full in the owning workspace.',
    params: processParams,
    body: updateProcessBody,
    validateBody: false,
    responses: {
      200: { description: 'Updated: the process as the read returns it', schema: discoveredProcessSchema },
      400: {
        description:
          'processId is not a UUID, nothing to update, or the merged process is invalid (metadata.violations)',
      },
      ...authoringErrors,
      404: { description: 'The process does not exist' },
      409: { description: 'Concurrent updates kept moving the process; retry' },
    },
    handler: async ({ req, res, params, auth }) => {
      res.json(await discovery.update(auth, params.processId, readableBody(req.body) ?? {}));
    },
  });

  api.route({
    ...common,
    method: 'post',
    path: '/api/v1/discovery/process/:processId/version',
    summary: 'Save a snapshot of a discovered process',
    description:
      'Copies the current state into an immutable snapshot and returns its processVersionId, which the read takes to return the process ' +
      'exactly as it is now, whatever changes later. Requires Discovery: Full in the owning workspace.',
    params: processParams,
    responses: {
      201: { description: 'The snapshot', schema: snapshotSchema },
      400: { description: 'processId is not a UUID' },
      ...authoringErrors,
      404: { description: 'The process does not exist' },
    },
    handler: async ({ res, params, auth }) => {
      res.status(201).json(await discovery.snapshot(auth, params.processId));
    },
  });
}
