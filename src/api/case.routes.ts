import type { Request, Response } from 'express';
import { z, type ZodType } from 'zod';
import type { AppContext } from '../context.js';
import { CaseService, executeBodySchema, initiateBodySchema } from '../cases/case-service.js';
import { caseStatuses, type CaseResults } from '../domain/cases.js';
import type { CaseRecord } from '../store/case-repo.js';
import type { ApiRoutes } from './route.js';
import { errorBodySchema, uuid } from './schemas/common.js';

export const resultEntrySchema = z.object({ value: z.unknown(), type: z.string(), displayName: z.string() });
const resultsBodySchema = z.object({
  results: z.record(z.string(), resultEntrySchema).meta({ description: "Keyed by the output variable's variable_name" }),
  status: z.enum(caseStatuses),
});
const notFinishedSchema = z
  .object({ statusCode: z.literal(202), message: z.string(), timestamp: z.string(), path: z.string(), errorCode: z.literal('') })
  .meta({ description: 'The case has not finished: no results yet' });

const nodeDataSchema = z.object({
  node_id: z.string(),
  node_name: z.string(),
  handler_class: z.string(),
  status: z.enum(['pending', 'running', 'completed', 'failed', 'skipped', 'cancelled', 'not_executed']),
  inputs: z.record(z.string(), z.unknown()).nullable(),
  outputs: z.record(z.string(), z.unknown()).nullable(),
  logs: z.array(z.object({ level: z.string(), message: z.string(), at: z.string() })),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
  attempts: z.number(),
  error: z.object({ message: z.string(), kind: z.string().optional(), traceback: z.string().optional() }).nullable(),
});
const auditSchema = z.object({
  caseId: z.string(),
  status: z.enum(caseStatuses),
  nb_nodes: z.number(),
  executed_nodes: z.array(z.string()).meta({ description: 'Nodes that ran (completed or failed), in the order they finished' }),
  nb_executed_nodes: z.number(),
  running_node: z.string().meta({ description: 'Empty when none is running' }),
  next_node_to_execute: z.string().meta({ description: 'Empty when none is queued' }),
  remaining_nodes_to_execute: z.array(z.string()),
  failed_nodes: z.array(z.string()),
  nb_failed_nodes: z.number(),
  audit: z.object({ nodes_execution_data: z.record(z.string(), nodeDataSchema).meta({ description: 'Keyed by node id' }) }),
});
export const statusSchema = z.object({
  caseId: z.string(),
  status: z.enum(caseStatuses),
  workflowId: z.string(),
  workflowVersionId: z.string(),
  workflowVersionNumber: z.number(),
  title: z.string().nullable(),
  source: z.string(),
  createdAt: z.string(),
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
  currentNode: z.object({ id: z.string(), name: z.string() }).nullable(),
  runningNodes: z.array(z.string()),
  error: z.object({ message: z.string(), nodeId: z.string().optional() }).nullable(),
  temporalUiUrl: z.string().nullable().meta({ description: "The run's page in the Temporal Web UI" }),
});
export const executedSchema = z.object({
  caseId: z.string(),
  status: z.enum(caseStatuses),
  workflowVersionId: z.string(),
  workflowVersionNumber: z.number(),
  temporalUiUrl: z.string().nullable(),
});

export const errors = {
  400: { description: 'Invalid body or id (metadata.fields)', schema: errorBodySchema },
  401: { description: 'Missing, invalid or expired key', schema: errorBodySchema },
  403: { description: 'The key lacks the case permission in the workspace', schema: errorBodySchema },
  404: { description: 'Unknown case (or one of another organization)', schema: errorBodySchema },
};

export function executedBody(record: CaseRecord, temporalUiUrl: string | null): z.infer<typeof executedSchema> {
  return { caseId: record.id, status: record.status, workflowVersionId: record.workflowVersionId, workflowVersionNumber: record.workflowVersionNumber, temporalUiUrl };
}

/** 200 { results } once the case has ended; 202 with the contract's exact body before. */
function sendResults(req: Request, res: Response, caseId: string, outcome: { record: CaseRecord; results: CaseResults } | undefined): void {
  if (!outcome) {
    res.status(202).json({ statusCode: 202, message: `Case ${caseId} has not finished yet`, timestamp: new Date().toISOString(), path: req.originalUrl, errorCode: '' });
    return;
  }
  res.status(200).json({ results: outcome.results, status: outcome.record.status });
}

/**
 * GET results and audit of one case. The case routes and the deprecated job
 * routes serve them with the same handlers; only the path (and the name of its
 * id parameter) and the documentation differ.
 */
export function registerCaseReads<P extends ZodType>(
  api: ApiRoutes,
  cases: CaseService,
  spec: {
    /** The case's own path, such as /api/v1/case/:caseId. */
    path: string;
    params: P;
    id: (params: z.infer<P>) => string;
    tags: string[];
    deprecated?: boolean;
    results: { summary: string; ended: string };
    audit: { summary: string; found: string };
  },
): void {
  api.route({
    method: 'get',
    path: `${spec.path}/results`,
    summary: spec.results.summary,
    tags: spec.tags,
    deprecated: spec.deprecated,
    auth: true,
    params: spec.params,
    responses: { 200: { description: spec.results.ended, schema: resultsBodySchema }, 202: { description: 'Not finished', schema: notFinishedSchema }, ...errors },
    handler: async ({ auth, params, req, res }) => {
      const id = spec.id(params);
      sendResults(req, res, id, await cases.results(auth, id));
    },
  });

  api.route({
    method: 'get',
    path: `${spec.path}/audit`,
    summary: spec.audit.summary,
    tags: spec.tags,
    deprecated: spec.deprecated,
    auth: true,
    params: spec.params,
    responses: { 200: { description: spec.audit.found, schema: auditSchema }, ...errors },
    handler: async ({ auth, params, res }) => {
      res.json(await cases.audit(auth, spec.id(params)));
    },
  });
}

const caseParams = z.object({ caseId: uuid });

export function registerCaseRoutes(api: ApiRoutes, ctx: AppContext): void {
  const cases = new CaseService(ctx);
  const tags = ['Cases'];

  api.route({
    method: 'post',
    path: '/api/v1/case',
    summary: 'Initiate a case',
    description: 'Creates a PENDING case of the latest active version of the workflow, or of the pinned one. Requires Case: Full in the workflow\'s workspace.',
    tags,
    auth: true,
    body: initiateBodySchema,
    responses: {
      201: { description: 'Created', schema: z.object({ caseId: z.string(), workflowVersionId: z.string(), workflowVersionNumber: z.number(), status: z.enum(caseStatuses) }) },
      ...errors,
      409: { description: 'The workflow has no active version and none is pinned', schema: errorBodySchema },
      413: { description: 'initialInput over cases.maxInputBytes as JSON', schema: errorBodySchema },
    },
    handler: async ({ auth, body, res }) => {
      const record = await cases.initiate(auth, body);
      res.status(201).json({ caseId: record.id, workflowVersionId: record.workflowVersionId, workflowVersionNumber: record.workflowVersionNumber, status: record.status });
    },
  });

  api.route({
    method: 'post',
    path: '/api/v1/case/:caseId/execute',
    summary: 'Execute a case',
    description:
      'Starts the run with the inputs (the input schema populated with values, or a flat inputs map keyed by variable_name), merged over initialInput. Requires Case: Full. A case runs once: executing it again gives 409.',
    tags,
    auth: true,
    params: caseParams,
    body: executeBodySchema,
    responses: { 202: { description: 'Running', schema: executedSchema }, ...errors, 409: { description: 'Already executed or cancelled', schema: errorBodySchema }, 413: { description: 'Case inputs over cases.maxInputBytes as JSON', schema: errorBodySchema } },
    handler: async ({ auth, params, body, res }) => {
      const { record, temporalUiUrl } = await cases.execute(auth, params.caseId, body);
      res.status(202).json(executedBody(record, temporalUiUrl));
    },
  });

  api.route({
    method: 'get',
    path: '/api/v1/case/:caseId/status',
    summary: 'Status of a case',
    tags,
    auth: true,
    params: caseParams,
    responses: { 200: { description: 'Status, timestamps, running node, error, link to the Temporal run', schema: statusSchema }, ...errors },
    handler: async ({ auth, params, res }) => {
      res.json(await cases.status(auth, params.caseId));
    },
  });

  registerCaseReads(api, cases, {
    path: '/api/v1/case/:caseId',
    params: caseParams,
    id: (params) => params.caseId,
    tags,
    results: { summary: 'Results of a case', ended: 'The case has ended' },
    audit: { summary: 'Per-node audit of a case (the job audit record)', found: 'The audit record' },
  });

  api.route({
    method: 'post',
    path: '/api/v1/case/:caseId/cancel',
    summary: 'Cancel a case',
    description: 'A PENDING case ends CANCELLED at once; a RUNNING one is cancelled through Temporal and records CANCELLED (the answer waits up to 10 s for it). Requires Case: Full.',
    tags,
    auth: true,
    params: caseParams,
    responses: {
      200: { description: 'The case after the request', schema: z.object({ caseId: z.string(), status: z.enum(caseStatuses) }) },
      ...errors,
      409: { description: 'The case has already ended', schema: errorBodySchema },
    },
    handler: async ({ auth, params, res }) => {
      const record = await cases.cancel(auth, params.caseId);
      res.json({ caseId: record.id, status: record.status });
    },
  });
}
