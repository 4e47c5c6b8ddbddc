import { randomUUID } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import type { Level } from 'pino';
import { redactUrl, type Logger } from '../logging/logger.js';

/** A caller's `x-request-id` is echoed only when it is this tame; otherwise one is generated. */
const callerRequestId = /^[\w.-]{1,128}$/;

/** Requests not logged: probes and scrapes would drown the rest. */
const unlogged = new Set(['/healthz', '/metrics']);

declare module 'express-serve-static-core' {
  interface Request {
    /** The request id, echoed in `x-request-id` and logged with the request. */
    id?: string;
  }
}

/**
 * The request as its log lines show it: the url with credential-carrying
 * parameters and path segments replaced; headers and query are redacted by
 * path in the logger. Route params are not logged apart: the url holds them,
 * redacted (the OAuth connect check's path carries a bearer token).
 */
export function requestFields(req: Request): Record<string, unknown> {
  return {
    id: req.id,
    method: req.method,
    url: redactUrl(req.originalUrl),
    query: req.query,
    headers: req.headers,
    remoteAddress: req.socket.remoteAddress,
    remotePort: req.socket.remotePort,
  };
}

/**
 * 5xx (or a failed response stream) as error, 4xx as warn, the rest info. A 503 is the answer the service chose
 * while a part is down (with Retry-After), and that part's outage is logged where it is seen: warn, so an outage
 * does not bury real errors under one error line per request.
 */
function levelOf(res: Response, err: unknown): Level {
  if (err || (res.statusCode >= 500 && res.statusCode !== 503)) return 'error';
  return res.statusCode >= 400 ? 'warn' : 'info';
}

/**
 * Gives every request an id (`x-request-id`) and logs one line when its
 * answer is done: the request, the status and headers, the time in ms.
 * The line is built only when its level is enabled, so a busy API at
 * LOG_LEVEL warn pays for a listener, not for serializing each request.
 */
export function requestLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && callerRequestId.test(incoming) ? incoming : randomUUID();
    req.id = id;
    res.setHeader('x-request-id', id);
    const started = Date.now();
    // The url as received: a router mounted on a path shortens req.url while it runs.
    const quiet = unlogged.has(req.url);
    // Finish, or close when the connection ends first; whichever comes first logs, once.
    let logged = false;
    const done = (err?: unknown): void => {
      if (logged) return;
      logged = true;
      const level = levelOf(res, err);
      if (!logger.isLevelEnabled(level) || (quiet && !err)) return;
      const line = {
        req: requestFields(req),
        res: { statusCode: res.headersSent ? res.statusCode : null, headers: res.getHeaders() },
        responseTime: Date.now() - started,
      };
      if (err || res.statusCode >= 500) {
        logger[level](
          { ...line, err: err ?? new Error(`failed with status code ${res.statusCode}`) },
          'request errored',
        );
        return;
      }
      logger[level](line, !req.readableAborted && res.writableEnded ? 'request completed' : 'request aborted');
    };
    res.on('finish', done);
    res.on('close', done);
    res.on('error', done);
    next();
  };
}
