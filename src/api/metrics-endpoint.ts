import express, { type Express, type RequestHandler } from 'express';
import type { AppContext } from '../context.js';
import { DomainError } from '../errors.js';
import { bearerMatches } from './bearer.js';
import { errorHandler, notFoundHandler } from './errors.js';

type MetricsContext = Pick<AppContext, 'config' | 'logger' | 'metrics'>;

/** GET /metrics: the Prometheus text, behind `metrics.token` when one is configured. */
export function serveMetrics(ctx: MetricsContext): RequestHandler {
  const { token } = ctx.config.metrics;
  return async (req, res) => {
    if (token !== undefined && !bearerMatches(req, token))
      throw DomainError.unauthorized('Missing or invalid metrics token');
    res.type(ctx.metrics.registry.contentType).send(await ctx.metrics.render());
  };
}

/** The listener of its own (`metrics.port`): /metrics and nothing else, so the API need not expose it. */
export function createMetricsApp(ctx: MetricsContext): Express {
  const app = express();
  app.disable('x-powered-by');
  app.get('/metrics', serveMetrics(ctx));
  app.use(notFoundHandler);
  app.use(errorHandler(ctx.logger));
  return app;
}
