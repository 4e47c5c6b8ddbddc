import type { Request, Response } from 'express';
import { z, type ZodType } from 'zod';
import type { AppContext } from '../context.js';
import type { CaseService } from '../cases/case-service.js';
import { executeBodySchema, initiateBodySchema, rerunBodySchema } from '../cases/schemas.js';
import type { CaseResults } from '../domain/cases.js';
import type { CaseRecord } from '../domain/case-records.js';
import type { ApiRoutes } from './route.js';
import { statsRoute } from './stats-route.js';
import {
  auditSchema,
  cancelledSchema,
  caseErrors as errors,
  caseListQuery,
  caseStatsQuery,
  caseStatsSchema,
  caseListSchema,
  executedSchema,
  initiatedSchema,
  intakeLimited,
  notFinishedSchema,
  rerunStartedSchema,
  resultsBodySchema,
  statusSchema,
} from './schemas/cases.js';
import { errorBodySchema, startIdempotencyHeaders, uuid } from './schemas/common.js';
import { answerIdempotently } from './idempotency.js';
import { intakeRateLimit } from './rate-limits.js';
import {
  auditView,
  cancelledView,
  caseListView,
  executedView,
  initiatedView,
  notFinishedView,
  rerunStartedView,
  resultsView,
  statusView,
} from './views/cases.js';

/** 200 { results } once the case has ended; 202 with the contract's exact body before. */
function sendResults(
  req: Request,
  res: Response,
  caseId: string,
  outcome: { record: CaseRecord; results: CaseResults } | undefined,
): void {
  if (!outcome) {
    res.status(202).json(notFinishedView(caseId, req.originalUrl));
    return;
  }
  res.status(200).json(resultsView(outcome.record, outcome.results));
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
    responses: {
      200: { description: spec.results.ended, schema: resultsBodySchema },
      202: { description: 'Not finished', schema: notFinishedSchema },
      ...errors,
    },
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
      res.json(auditView(await cases.audit(auth, spec.id(params))));
    },
  });
}

const caseParams = z.object({ caseId: uuid });

/** The refusals of a query across the workspaces a key reads with Case: Read. */
const caseReadRefusals = {
  401: errors[401],
  403: { description: 'The key lacks Case: Read', schema: errorBodySchema },
};

export function registerCaseRoutes(api: ApiRoutes, ctx: AppContext): void {
  const { cases, idempotency, reruns } = ctx.services;
  const tags = ['Cases'];
  const intake = intakeRateLimit(ctx.services.rateLimits, ctx.config.cases.intakeRateLimit);

  api.route({
    method: 'post',
    path: '/api/v1/case',
    summary: 'Initiate a case',
    description:
      "Creates a PENDING case of the latest active version of the workflow, or of the pinned one. Requires Case: Full in the workflow's workspace. " +
      'With an Idempotency-Key, a retry answers the first answer and creates nothing.',
    tags,
    auth: true,
    headers: startIdempotencyHeaders,
    body: initiateBodySchema,
    responses: {
      201: {
        description: 'Created (or, with Idempotency-Replayed: true, the first answer of this key)',
        schema: initiatedSchema,
      },
      ...errors,
      409: {
        description:
          'The workflow has no active version and none is pinned, or the Idempotency-Key was used with another body',
        schema: errorBodySchema,
      },
      413: { description: 'initialInput over cases.maxInputBytes as JSON', schema: errorBodySchema },
      ...intakeLimited,
    },
    handler: async ({ auth, body, req, res }) => {
      await intake(res, auth, 'initiate');
      await answerIdempotently(idempotency, auth, { req, res, body }, async () => ({
        status: 201,
        body: initiatedView(await cases.initiate(auth, body)),
      }));
    },
  });

  api.route({
    method: 'get',
    path: '/api/v1/case',
    summary: 'List cases',
    description:
      'Cases newest first, a page at a time (cursor), in the workspaces the key reads with Case: Read; filters: workspaceId, ' +
      'workflowId, status, and a creation time range (from inclusive, to exclusive). A workspace or workflow the key does not ' +
      'reach lists nothing.',
    tags,
    auth: true,
    query: caseListQuery,
    responses: {
      200: { description: 'One page of cases', schema: caseListSchema },
      400: { description: 'Malformed filter, time range, limit or cursor (metadata.fields)', schema: errorBodySchema },
      ...caseReadRefusals,
    },
    handler: async ({ auth, query, res }) => {
      res.json(caseListView(await cases.list(auth, query)));
    },
  });

  statsRoute(api, {
    figures: 'cases',
    summary: "The caller's case figures per workflow",
    description:
      'Counts by status and run times (execute → end) of the cases created in a window (default: the last day, at most ' +
      '31 days), per workflow, in the workspaces the key reads with Case: Read; filters: workspaceId, workflowId. A ' +
      'workspace or workflow the key does not reach counts nothing. Computed from the store: the per-tenant figures ' +
      '/metrics does not label.',
    tags,
    query: caseStatsQuery,
    answer: { description: 'Figures per workflow', schema: caseStatsSchema },
    refusals: caseReadRefusals,
    stats: (auth, query) => cases.stats(auth, query),
  });

  api.route({
    method: 'post',
    path: '/api/v1/case/:caseId/execute',
    summary: 'Execute a case',
    description:
      'Starts the run with the inputs (the input schema populated with values, or a flat inputs map keyed by variable_name), merged over initialInput. Requires Case: Full. A case runs once: executing it again gives 409, ' +
      'except a retry with the same Idempotency-Key and body, which answers the first answer.',
    tags,
    auth: true,
    params: caseParams,
    headers: startIdempotencyHeaders,
    body: executeBodySchema(ctx.config.cases.maxDeadlineMs),
    responses: {
      202: {
        description: 'Running (or, with Idempotency-Replayed: true, the first answer of this key)',
        schema: executedSchema,
      },
      ...errors,
      409: {
        description: 'Already executed or cancelled, or the Idempotency-Key was used with another body',
        schema: errorBodySchema,
      },
      413: { description: 'Case inputs over cases.maxInputBytes as JSON', schema: errorBodySchema },
      ...intakeLimited,
    },
    handler: async ({ auth, params, body, req, res }) => {
      await intake(res, auth, 'execute');
      await answerIdempotently(idempotency, auth, { req, res, body }, async () => {
        const { record, temporalUiUrl } = await cases.execute(auth, params.caseId, body);
        return { status: 202, body: executedView(record, temporalUiUrl) };
      });
    },
  });

  api.route({
    method: 'get',
    path: '/api/v1/case/:caseId/status',
    summary: 'Status of a case',
    tags,
    auth: true,
    params: caseParams,
    responses: {
      200: { description: 'Status, timestamps, running node, error, link to the Temporal run', schema: statusSchema },
      ...errors,
    },
    handler: async ({ auth, params, res }) => {
      res.json(statusView(await cases.status(auth, params.caseId)));
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
    description:
      'A PENDING case ends CANCELLED at once; a RUNNING one is cancelled through Temporal and records CANCELLED (the answer waits up to 10 s for it). A cancel that reaches the run while its last node runs together with the end does not stop it: the answer shows the end that node makes (COMPLETED, say, or RUNNING past the wait), never CANCELLED. Requires Case: Full.',
    tags,
    auth: true,
    params: caseParams,
    responses: {
      200: { description: 'The case after the request', schema: cancelledSchema },
      ...errors,
      409: { description: 'The case has already ended', schema: errorBodySchema },
    },
    handler: async ({ auth, params, res }) => {
      const record = await cases.cancel(auth, params.caseId);
      res.json(cancelledView(record));
    },
  });

  api.route({
    method: 'post',
    path: '/api/v1/case/:caseId/rerun',
    summary: 'Rerun an ended case',
    description:
      'Starts a new case (its own id, status and Temporal run) that reruns this one: from the start, or from the node ' +
      'that failed (a FAILED case only: the nodes that completed are not run again, their recorded outputs are reused ' +
      'and marked `reused` in the audit), on the version the case ran or on the latest active one, with the ' +
      'original inputs and any overrides. The new case has `rerunOf`; the original lists it in `reruns`. Its callback ' +
      'URL and deadline are the original’s. Cases initiated as jobs rerun the same way. Requires Case: Full.',
    tags,
    auth: true,
    params: caseParams,
    body: rerunBodySchema,
    responses: {
      201: { description: 'The rerun, started', schema: rerunStartedSchema },
      ...errors,
      409: {
        description:
          'The case has not ended; `failed` on a case that did not fail; the latest version lacks a node to reuse or its ' +
          'recorded outputs do not fit (metadata.nodes); or the workflow has no active version',
        schema: errorBodySchema,
      },
      413: { description: 'The rerun’s inputs over cases.maxInputBytes as JSON', schema: errorBodySchema },
    },
    handler: async ({ auth, params, body, res }) => {
      const started = await reruns.rerun(auth, params.caseId, body);
      res.status(201).json(rerunStartedView(started, { rerunOf: params.caseId, rerunFrom: body.from }));
    },
  });
}
