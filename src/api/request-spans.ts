import type * as OtelApi from '@opentelemetry/api';
import type { Request, RequestHandler, Response } from 'express';

/**
 * The requests that continue a caller's trace (`traceparent`): a case start (`…/execute`) and a webhook
 * trigger delivery. Every other request starts a trace of its own, whatever headers it sends.
 */
function continuesCallerTrace(req: Request): boolean {
  return req.method === 'POST' && (req.path.endsWith('/execute') || /^\/hooks\/[^/]+$/.test(req.path));
}

/** The workspace the request names in its path, query, header or JSON body (never anything else of the body). */
function workspaceOf(req: Request): string | undefined {
  const field = 'workspaceId';
  const body: unknown = req.body;
  const candidates: unknown[] = [
    req.get('x-workspace-id'),
    (req.params as Record<string, unknown> | undefined)?.[field],
    (req.query as Record<string, unknown>)[field],
    body !== null && typeof body === 'object' && !Buffer.isBuffer(body)
      ? (body as Record<string, unknown>)[field]
      : undefined,
  ];
  return candidates.find((value): value is string => typeof value === 'string');
}

/** What the span tells once the answer is done: the route template, the status, the caller's tenant ids. */
function finish(req: Request, res: Response): { name: string; attributes: Record<string, string | number> } {
  // The route pattern, never the path: paths carry ids of every kind, and one carries a token.
  const pattern = (req.route as { path?: unknown } | undefined)?.path;
  const route = typeof pattern === 'string' ? `${req.baseUrl}${pattern}` : undefined;
  const attributes: Record<string, string | number> = { 'http.response.status_code': res.statusCode };
  if (route) attributes['http.route'] = route;
  const organizationId = req.auth?.organizationId;
  if (organizationId) attributes['caseflow.organization.id'] = organizationId;
  const workspaceId = workspaceOf(req);
  if (workspaceId) attributes['caseflow.workspace.id'] = workspaceId;
  return { name: route ? `${req.method} ${route}` : req.method, attributes };
}

/**
 * A server span per request (installed only when tracing is on, with the API it loaded), active while the
 * request is handled so the case run it starts and the calls it makes are its children. Method, route
 * template, status and tenant ids only: no headers, query values or bodies.
 */
export function requestSpans(otel: typeof OtelApi): RequestHandler {
  const { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, propagation, trace } = otel;
  const tracer = trace.getTracer('caseflow');
  return (req, res, next) => {
    const parent = continuesCallerTrace(req) ? propagation.extract(ROOT_CONTEXT, req.headers) : ROOT_CONTEXT;
    const span = tracer.startSpan(
      req.method,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method } },
      parent,
    );
    let ended = false;
    const end = (): void => {
      if (ended) return;
      ended = true;
      const { name, attributes } = finish(req, res);
      span.updateName(name);
      span.setAttributes(attributes);
      if (res.statusCode >= 500 || !res.writableFinished) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    };
    res.once('finish', end);
    res.once('close', end);
    const active = trace.setSpan(parent, span);
    // The body arrives in events of the request's own async resource: bound, its listeners (the body
    // parsers, then the routes) run inside the span, as OpenTelemetry's http instrumentation does.
    context.bind(active, req);
    context.with(active, next);
  };
}
