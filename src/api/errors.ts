import type { ErrorRequestHandler, RequestHandler } from 'express';
import { DomainError, type ErrorCode } from '../errors.js';
import type { Logger } from '../logging/logger.js';
import { RateLimitedError } from '../rate-limits/rate-limiter.js';
import { rateLimitHeaders } from './rate-limits.js';
import { requestFields } from './request-log.js';

/** The status each domain error code answers with. */
const statusByCode: Record<ErrorCode, number> = {
  BAD_REQUEST: 400,
  VALIDATION_ERROR: 400,
  MALFORMED_JSON: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  UNPROCESSABLE: 422,
  RATE_LIMITED: 429,
  SERVICE_UNAVAILABLE: 503,
  INTERNAL_ERROR: 500,
};

export function httpStatus(err: DomainError): number {
  return statusByCode[err.errorCode];
}

export interface ErrorBody {
  statusCode: number;
  message: string;
  errorCode: string;
  timestamp: string;
  path: string;
  metadata?: Record<string, unknown>;
}

export function errorBody(
  statusCode: number,
  errorCode: string,
  message: string,
  path: string,
  metadata?: Record<string, unknown>,
): ErrorBody {
  return {
    statusCode,
    message,
    errorCode,
    timestamp: new Date().toISOString(),
    path,
    ...(metadata ? { metadata } : {}),
  };
}

export const notFoundHandler: RequestHandler = (req, _res, next) => {
  next(DomainError.notFound(`No route for ${req.method} ${req.path}`));
};

/** Errors thrown by body-parser carry an HTTP status and a `type`. */
interface HttpParserError {
  status?: number;
  statusCode?: number;
  type?: string;
  expose?: boolean;
  message: string;
}

/** Seconds a client is told to wait when the store is unreachable. */
const STORE_RETRY_AFTER_S = 5;

/** Tells an error of the store being unreachable from one of the request (the store knows its driver's errors). */
export type StoreUnavailable = (err: unknown) => boolean;

function toDomainError(err: unknown, storeUnavailable: StoreUnavailable): DomainError | undefined {
  if (err instanceof DomainError) return err;
  if (storeUnavailable(err))
    return DomainError.unavailable('The database is unavailable; try again after Retry-After', STORE_RETRY_AFTER_S);
  return bodyParserError(err);
}

/** The domain error of a body-parser failure (malformed, too large, unsupported), or undefined for anything else. */
export function bodyParserError(err: unknown): DomainError | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const parser = err as HttpParserError;
  const status = parser.status ?? parser.statusCode;
  if (typeof status !== 'number' || status < 400 || status >= 500) return undefined;
  if (parser.type === 'entity.parse.failed') return new DomainError('MALFORMED_JSON', 'Request body is not valid JSON');
  if (parser.type === 'entity.too.large') return DomainError.tooLarge('Request body is too large');
  if (status === 415) return new DomainError('UNSUPPORTED_MEDIA_TYPE', parser.message);
  return DomainError.badRequest(parser.expose ? parser.message : 'Bad request');
}

/** Turns anything thrown in a route into the one error body; never a stack trace. */
export function errorHandler(logger: Logger, storeUnavailable: StoreUnavailable = () => false): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const domainError = toDomainError(err, storeUnavailable);
    if (!domainError) logger.error({ err, req: requestFields(req) }, 'unhandled error');
    else if (domainError.errorCode === 'SERVICE_UNAVAILABLE' && !(err instanceof DomainError))
      logger.warn({ err, req: requestFields(req) }, 'store unavailable');
    const status = domainError ? httpStatus(domainError) : 500;
    const body = domainError
      ? errorBody(status, domainError.errorCode, domainError.message, req.originalUrl, domainError.metadata)
      : errorBody(500, 'INTERNAL_ERROR', 'Internal server error', req.originalUrl);
    if (res.headersSent) return;
    if (domainError?.retryAfterSeconds !== undefined) res.set('Retry-After', String(domainError.retryAfterSeconds));
    if (domainError instanceof RateLimitedError) res.set(rateLimitHeaders(domainError.quotas));
    res.status(status).json(body);
  };
}
