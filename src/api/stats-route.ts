import type { z, ZodType } from 'zod';
import type { AuthContext } from '../domain/auth-context.js';
import type { ApiRoutes, ResponseSpec } from './route.js';
import { errorBodySchema } from './schemas/common.js';

/** What one of the stats routes figures and who may read it. */
interface StatsRouteSpec<Q extends ZodType> {
  /** The path's last segment: GET /api/v1/stats/<figures>. */
  figures: string;
  summary: string;
  description: string;
  tags: string[];
  /** Its filters and window (`from`, `to`; at most 31 days). */
  query: Q;
  /** The 200 answer. */
  answer: ResponseSpec;
  /** Its refusals besides the 400 (the key's, the grant's). */
  refusals: Record<number, ResponseSpec>;
  stats: (auth: AuthContext, query: z.infer<Q>) => Promise<unknown>;
}

/** A stats route: the caller's per-tenant figures over a time window, computed from the store. */
export function statsRoute<Q extends ZodType>(api: ApiRoutes, spec: StatsRouteSpec<Q>): void {
  api.route({
    method: 'get',
    path: `/api/v1/stats/${spec.figures}`,
    summary: spec.summary,
    description: spec.description,
    tags: spec.tags,
    auth: true,
    query: spec.query,
    responses: {
      200: spec.answer,
      400: { description: 'Malformed filter or time range, or a window over 31 days', schema: errorBodySchema },
      ...spec.refusals,
    },
    handler: async ({ auth, query, res }) => {
      res.json(await spec.stats(auth, query));
    },
  });
}
