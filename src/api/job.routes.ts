import { z } from 'zod';
import type { AppContext } from '../context.js';
import { executeBodySchema, initiateBodySchema, withOneInputForm } from '../cases/schemas.js';
import { registerCaseReads } from './case.routes.js';
import type { ApiRoutes } from './route.js';
import {
  caseErrors as errors,
  intakeLimited,
  jobExecutedSchema,
  jobInitiatedSchema,
  jobStatusSchema,
} from './schemas/cases.js';
import { errorBodySchema, startIdempotencyHeaders, uuid } from './schemas/common.js';
import { answerIdempotently } from './idempotency.js';
import { intakeRateLimit } from './rate-limits.js';
import { jobExecutedView, jobInitiatedView, jobStatusView } from './views/cases.js';

const jobParams = z.object({ jobExecutionId: uuid });

/** The deprecated job endpoints: cases under their old paths, same behaviour. */
export function registerJobRoutes(api: ApiRoutes, ctx: AppContext): void {
  const { cases, idempotency } = ctx.services;
  const tags = ['Jobs (deprecated)'];
  // The same budgets as the case paths': a job is a case under its old path.
  const intake = intakeRateLimit(ctx.services.rateLimits, ctx.config.cases.intakeRateLimit);

  api.route({
    method: 'post',
    path: '/job/initiate',
    summary: 'Initiate a job',
    tags,
    deprecated: true,
    auth: true,
    headers: startIdempotencyHeaders,
    body: initiateBodySchema,
    responses: {
      201: {
        description: 'Created (or, with Idempotency-Replayed: true, the first answer of this key)',
        schema: jobInitiatedSchema,
      },
      ...errors,
      409: {
        description: 'No active version, or the Idempotency-Key was used with another body',
        schema: errorBodySchema,
      },
      413: { description: 'initialInput over cases.maxInputBytes as JSON', schema: errorBodySchema },
      ...intakeLimited,
    },
    handler: async ({ auth, body, req, res }) => {
      await intake(res, auth, 'initiate');
      await answerIdempotently(idempotency, auth, { req, res, body }, async () => ({
        status: 201,
        body: jobInitiatedView(await cases.initiate(auth, body)),
      }));
    },
  });

  api.route({
    method: 'post',
    path: '/job/execute',
    summary: 'Execute a job',
    tags,
    deprecated: true,
    auth: true,
    body: withOneInputForm(executeBodySchema(ctx.config.cases.maxDeadlineMs).extend({ jobExecutionId: uuid })),
    responses: {
      202: { description: 'Running', schema: jobExecutedSchema },
      ...errors,
      409: { description: 'Already executed', schema: errorBodySchema },
      413: { description: 'Job inputs over cases.maxInputBytes as JSON', schema: errorBodySchema },
      ...intakeLimited,
    },
    handler: async ({ auth, body, res }) => {
      await intake(res, auth, 'execute');
      const { jobExecutionId, ...execute } = body;
      const { record, temporalUiUrl } = await cases.execute(auth, jobExecutionId, execute);
      res.status(202).json(jobExecutedView(record, temporalUiUrl));
    },
  });

  api.route({
    method: 'get',
    path: '/job/:jobExecutionId/status',
    summary: 'Status of a job',
    tags,
    deprecated: true,
    auth: true,
    params: jobParams,
    responses: { 200: { description: 'Status', schema: jobStatusSchema }, ...errors },
    handler: async ({ auth, params, res }) => {
      res.json(jobStatusView(await cases.status(auth, params.jobExecutionId)));
    },
  });

  registerCaseReads(api, cases, {
    path: '/job/:jobExecutionId',
    params: jobParams,
    id: (params) => params.jobExecutionId,
    tags,
    deprecated: true,
    results: { summary: 'Results of a job', ended: 'Ended' },
    audit: { summary: 'Audit of a job', found: 'The job audit record' },
  });
}
