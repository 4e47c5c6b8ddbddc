import { z } from 'zod';
import type { AppContext } from '../context.js';
import type { ApiRoutes } from './route.js';
import { rerunBatchBodySchema, rerunBatchSchema } from './schemas/cases.js';
import { errorBodySchema, uuid } from './schemas/common.js';
import { rerunBatchView } from './views/cases.js';

const batchParams = z.object({ batchId: uuid });

const refusals = {
  401: { description: 'Missing, invalid or expired key', schema: errorBodySchema },
  403: { description: 'The key lacks the case permission', schema: errorBodySchema },
};
/** What a request naming a batch is refused with. */
const batchRefusals = {
  400: { description: 'Invalid id', schema: errorBodySchema },
  ...refusals,
  404: { description: 'Unknown batch (or one of another organization)', schema: errorBodySchema },
};

/** Bulk reruns: create a batch, read its progress, cancel it. */
export function registerRerunBatchRoutes(api: ApiRoutes, ctx: AppContext): void {
  const { rerunBatches } = ctx.services;
  const tags = ['Cases'];

  api.route({
    method: 'post',
    path: '/api/v1/case/rerun',
    summary: 'Rerun the cases a filter matches',
    description:
      'Creates a batch that reruns, one by one at a bounded rate (cases.rerunBatchPerSecond), every case the filter ' +
      '(that of GET /api/v1/case) matches now, in the workspaces the key reaches with Case: Full, each as POST ' +
      '/api/v1/case/{caseId}/rerun would with `from` and `version`. A case the rerun refuses is skipped with the ' +
      'reason. Runs as a Temporal workflow (case-rerun-<batchId>); read its progress at /api/v1/case/rerun/{batchId}.',
    tags,
    auth: true,
    body: rerunBatchBodySchema,
    responses: {
      202: { description: 'The batch, started', schema: rerunBatchSchema },
      400: {
        description: 'Invalid body, or a filter matching more than cases.rerunBatchMaxCases cases',
        schema: errorBodySchema,
      },
      409: {
        description: 'The organization has cases.maxRunningRerunBatches batches running (metadata.limit)',
        schema: errorBodySchema,
      },
      ...refusals,
    },
    handler: async ({ auth, body, res }) => {
      res.status(202).json(rerunBatchView(await rerunBatches.create(auth, body)));
    },
  });

  api.route({
    method: 'get',
    path: '/api/v1/case/rerun/:batchId',
    summary: 'Progress of a bulk rerun',
    description: 'Matched, started, skipped (with reasons) and failed cases. Requires Case: Read.',
    tags,
    auth: true,
    params: batchParams,
    responses: {
      200: { description: 'The batch', schema: rerunBatchSchema },
      ...batchRefusals,
    },
    handler: async ({ auth, params, res }) => {
      res.json(rerunBatchView(await rerunBatches.progress(auth, params.batchId)));
    },
  });

  api.route({
    method: 'post',
    path: '/api/v1/case/rerun/:batchId/cancel',
    summary: 'Cancel a bulk rerun',
    description:
      'Stops the batch before its next case; reruns already started go on (cancel them one by one). The answer waits up ' +
      'to 10 s for the batch to record CANCELLED. Requires Case: Full.',
    tags,
    auth: true,
    params: batchParams,
    responses: {
      200: { description: 'The batch after the request', schema: rerunBatchSchema },
      ...batchRefusals,
      409: { description: 'The batch has already ended', schema: errorBodySchema },
    },
    handler: async ({ auth, params, res }) => {
      res.json(rerunBatchView(await rerunBatches.cancel(auth, params.batchId)));
    },
  });
}
