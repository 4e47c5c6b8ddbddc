import { z } from 'zod';
import type { AppContext } from '../context.js';
import { pingStore } from '../store/database.js';
import type { ApiRoutes } from './route.js';

const checkSchema = z.object({ ok: z.boolean(), error: z.string().optional(), latencyMs: z.number() });
const readinessSchema = z.object({
  status: z.enum(['ready', 'not_ready']),
  checks: z.object({ store: checkSchema, temporal: checkSchema }),
});

/** The raw error may name hosts, paths or credentials: it goes to the log, the unauthenticated answer stays generic. */
async function check(ctx: AppContext, name: string, fn: () => Promise<unknown>): Promise<z.infer<typeof checkSchema>> {
  const started = performance.now();
  try {
    await fn();
    return { ok: true, latencyMs: Math.round(performance.now() - started) };
  } catch (err) {
    ctx.logger.warn({ err, check: name }, 'readiness check failed');
    return { ok: false, error: `${name} unavailable`, latencyMs: Math.round(performance.now() - started) };
  }
}

/** Liveness and readiness for orchestrators and the Dockerfile's HEALTHCHECK. */
export function registerSystemRoutes(api: ApiRoutes, ctx: AppContext): void {
  api.route({
    method: 'get',
    path: '/healthz',
    summary: 'Liveness: the process answers',
    tags: ['Operations'],
    auth: false,
    responses: { 200: { description: 'Alive', schema: z.object({ status: z.literal('ok') }) } },
    handler: ({ res }) => {
      res.json({ status: 'ok' });
    },
  });

  api.route({
    method: 'get',
    path: '/readyz',
    summary: 'Readiness: the store and Temporal answer',
    tags: ['Operations'],
    auth: false,
    responses: {
      200: { description: 'Ready', schema: readinessSchema },
      503: { description: 'Not ready', schema: readinessSchema },
    },
    handler: async ({ res }) => {
      const [store, temporal] = await Promise.all([
        check(ctx, 'store', () => pingStore(ctx.store.db)),
        check(ctx, 'temporal', () =>
          ctx.temporal.connection.withDeadline(Date.now() + 2000, () =>
            ctx.temporal.connection.workflowService.getSystemInfo({}),
          ),
        ),
      ]);
      const ready = store.ok && temporal.ok;
      res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not_ready', checks: { store, temporal } });
    },
  });
}
