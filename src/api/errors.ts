import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from '../logging/logger.js';

export type ErrorCode =
  | 'BAD_REQUEST'
  | 'VALIDATION_ERROR'
  | 'MALFORMED_JSON'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'UNPROCESSABLE'
  | 'RATE_LIMITED'
  | 'SERVICE_UNAVAILABLE'
  | 'INTERNAL_ERROR';

/** An error that becomes the contract's error body with its status code. */
export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly errorCode: ErrorCode,
    message: string,
    readonly metadata?: Record<string, unknown>,
    /** Response headers that belong to the error, such as Retry-After. */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  static badRequest(message: string, metadata?: Record<string, unknown>): ApiError {
    return new ApiError(400, 'BAD_REQUEST', message, metadata);
  }
  static unauthorized(message = 'Missing, invalid or expired API key'): ApiError {
    return new ApiError(401, 'UNAUTHORIZED', message);
  }
  static forbidden(message: string): ApiError {
    return new ApiError(403, 'FORBIDDEN', message);
  }
  static notFound(message: string): ApiError {
    return new ApiError(404, 'NOT_FOUND', message);
  }
  static conflict(message: string, metadata?: Record<string, unknown>): ApiError {
    return new ApiError(409, 'CONFLICT', message, metadata);
  }
  static unprocessable(message: string, metadata?: Record<string, unknown>): ApiError {
    return new ApiError(422, 'UNPROCESSABLE', message, metadata);
  }
  static unavailable(message: string, retryAfterSeconds: number): ApiError {
    return new ApiError(503, 'SERVICE_UNAVAILABLE', message, { retryAfterSeconds }, { 'Retry-After': String(retryAfterSeconds) });
  }
}

export interface ErrorBody {
  statusCode: number;
  message: string;
  errorCode: string;
  timestamp: string;
  path: string;
  metadata?: Record<string, unknown>;
}

export function errorBody(statusCode: number, errorCode: string, message: string, path: string, metadata?: Record<string, unknown>): ErrorBody {
  return { statusCode, message, errorCode, timestamp: new Date().toISOString(), path, ...(metadata ? { metadata } : {}) };
}

export const notFoundHandler: RequestHandler = (req, _res, next) => {
  next(ApiError.notFound(`No route for ${req.method} ${req.path}`));
};

/** Errors thrown by body-parser carry an HTTP status and a `type`. */
interface HttpParserError {
  status?: number;
  statusCode?: number;
  type?: string;
  expose?: boolean;
  message: string;
}

function toApiError(err: unknown): ApiError | undefined {
  if (err instanceof ApiError) return err;
  const parser = err as HttpParserError;
  const status = parser?.status ?? parser?.statusCode;
  if (typeof status !== 'number' || status < 400 || status >= 500) return undefined;
  if (parser.type === 'entity.parse.failed') return new ApiError(400, 'MALFORMED_JSON', 'Request body is not valid JSON');
  if (parser.type === 'entity.too.large') return new ApiError(413, 'PAYLOAD_TOO_LARGE', 'Request body is too large');
  if (status === 415) return new ApiError(415, 'UNSUPPORTED_MEDIA_TYPE', parser.message);
  return new ApiError(status, 'BAD_REQUEST', parser.expose ? parser.message : 'Bad request');
}

/** Turns anything thrown in a route into the one error body; never a stack trace. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const apiError = toApiError(err);
    if (!apiError) {
      (req.log ?? logger).error({ err }, 'unhandled error');
    }
    const status = apiError?.statusCode ?? 500;
    const body = apiError
      ? errorBody(status, apiError.errorCode, apiError.message, req.originalUrl, apiError.metadata)
      : errorBody(500, 'INTERNAL_ERROR', 'Internal server error', req.originalUrl);
    if (res.headersSent) return;
    if (apiError?.headers) res.set(apiError.headers);
    res.status(status).json(body);
  };
}
