import express, { type Express, type RequestHandler } from 'express';
import swaggerUi from 'swagger-ui-express';
import { publicUrl } from '../config/config.js';
import type { AppContext } from '../context.js';
import type { Metrics } from '../metrics/metrics.js';
import { parsesAsJson } from '../files/upload-body.js';
import { adminGate } from './admin.routes.js';
import { createAuthenticator } from './authenticate.js';
import { errorHandler, notFoundHandler } from './errors.js';
import { OpenApiBuilder } from './openapi.js';
import { openApiLinks } from './openapi-links.js';
import { serveMetrics } from './metrics-endpoint.js';
import { jsonBodies, rawBodies } from './request-body.js';
import { requestLog } from './request-log.js';
import { requestSpans } from './request-spans.js';
import { ApiRoutes } from './route.js';
import { routeRegistrations } from './routers.js';
import { temporalCodecCors } from './temporal-codec.routes.js';

export interface App {
  app: Express;
  /** The OpenAPI document, built at its first use and kept (openapi.ts: not at start). */
  openApiDocument: () => Record<string, unknown>;
}

/** The express application: logging, metrics, JSON parsing, every route, one error shape. */
export function createApp(ctx: AppContext): App {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', 'loopback');
  // Off, no middleware at all (and OpenTelemetry not loaded): tracing costs a request nothing.
  if (ctx.tracing.api) app.use(requestSpans(ctx.tracing.api));
  app.use(requestLog(ctx.logger));
  app.use(httpMetrics(ctx.metrics));
  app.use(temporalCodecCors(ctx));
  app.use(adminGate(ctx));
  // Hook deliveries keep their bytes: the signature is over them, and their size limit is the hooks' own.
  app.use('/hooks', rawBodies(ctx.config.hooks.maxPayloadBytes));
  app.use(jsonBodies({ limit: ctx.config.bodyLimit, type: parsesAsJson }));

  const openApi = new OpenApiBuilder();
  const router = express.Router();
  const api = new ApiRoutes(router, openApi, createAuthenticator(ctx.services.authentication));
  for (const register of routeRegistrations) register(api, ctx);
  api.rejectOtherMethods();
  openApi.link(openApiLinks);
  let document: Record<string, unknown> | undefined;
  const openApiDocument = () => (document ??= openApi.document(publicUrl(ctx.config)));

  // With a listener of its own (metrics.port) the API port does not serve /metrics at all.
  if (ctx.config.metrics.port === undefined) app.get('/metrics', serveMetrics(ctx));
  app.get('/openapi.json', (_req, res) => {
    res.json(openApiDocument());
  });
  app.use('/docs', swaggerUi.serve, swaggerUi.setup(undefined, { swaggerOptions: { url: '/openapi.json' } }));
  app.use(router);
  app.use(notFoundHandler);
  // Asked when an error happens: a context built only for the document (scripts/generate-client.ts) has no store.
  app.use(errorHandler(ctx.logger, (err) => ctx.store.isUnavailable(err)));
  return { app, openApiDocument };
}

function httpMetrics(metrics: Metrics): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    res.once('finish', () => {
      // The route pattern, not the raw path, keeps label cardinality bounded.
      const pattern = (req.route as { path?: unknown } | undefined)?.path;
      const route = typeof pattern === 'string' ? `${req.baseUrl}${pattern}` : 'unmatched';
      metrics.observeHttp(
        { method: req.method, route, status: String(res.statusCode) },
        Number(process.hrtime.bigint() - started) / 1e9,
      );
    });
    next();
  };
}
