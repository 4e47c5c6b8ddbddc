import { z } from 'zod';
import type { AppContext } from '../context.js';
import { pingEngine, within } from '../temporal/engine-health.js';
import type { ApiRoutes } from './route.js';

const checkSchema = z.object({ ok: z.boolean(), error: z.string().optional(), latencyMs: z.number() });
const readinessSchema = z.object({
  status: z.enum(['ready', 'not_ready']),
  checks: z.object({ store: checkSchema, temporal: checkSchema }),
});

/** Each check answers within this, so an orchestrator's probe never hangs on a part that is gone. */
const CHECK_TIMEOUT_MS = 1000;

const livenessSchema = z.object({
  status: z.enum(['ok', 'failed']),
  reason: z.string().optional().describe('Why the process should be restarted'),
});

/** The raw error may name hosts, paths or credentials: it goes to the log, the unauthenticated answer stays generic. */
async function check(ctx: AppContext, name: string, fn: () => Promise<unknown>): Promise<z.infer<typeof checkSchema>> {
  const started = performance.now();
  try {
    await within(CHECK_TIMEOUT_MS, name, fn());
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
    summary: 'Liveness: the process answers and can recover by itself',
    description:
      'Fails (503) only when restarting the process is the cure: the embedded Temporal server died more often than ' +
      'it may be restarted. An engine or store that is merely down shows in /readyz instead.',
    tags: ['Operations'],
    auth: false,
    responses: {
      200: { description: 'Alive', schema: livenessSchema },
      503: { description: 'Restart this process', schema: livenessSchema },
    },
    handler: ({ res }) => {
      const engine = ctx.engine.current();
      if (engine.state === 'failed') res.status(503).json({ status: 'failed', reason: 'workflow engine failed' });
      else res.json({ status: 'ok' });
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
        check(ctx, 'store', () => ctx.store.ping()),
        check(ctx, 'temporal', () =>
          // Known down (the embedded server died, or the probe failed): no need to wait for a timeout.
          ctx.engine.isUp()
            ? pingEngine(ctx.temporal.connection, CHECK_TIMEOUT_MS)
            : Promise.reject(new Error(`engine ${ctx.engine.current().state}: ${ctx.engine.current().reason ?? ''}`)),
        ),
      ]);
      const ready = store.ok && temporal.ok;
      res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not_ready', checks: { store, temporal } });
    },
  });
}
